"""Rainbow DQN learning step (Kaixhin/Rainbow): double-Q target distribution, L2 projection of
the Bellman-updated support onto the fixed atoms (C51), and the cross-entropy loss.

Source: https://github.com/Kaixhin/Rainbow/blob/087ec49508963240a026782e7a051fc5fc78dc1d/agent.py
(Agent.learn, kept as in the source from the network calls to the importance-weighted loss;
the replay-memory sampling before it and the optimiser step / priority update after it are left
out, so the callable returns the loss) and
https://github.com/Kaixhin/Rainbow/blob/master/model.py (NoisyLinear, DQN; the convolutional
encoder reduced to one linear layer). Agent is an nn.Module here so its networks are compared.
8-dim observations, 3 actions, 11 atoms on [-5, 5] (delta_z = 1), batch 4.

Breaks: the fix for "disappearing probability mass when l = b = u",
`l[(u > 0) * (l == u)] -= 1` and `u[(l < (self.atoms - 1)) * (l == u)] += 1`, index with a
boolean mask (read-modify-write through `__getitem__`/`__setitem__` with a data-dependent number
of elements).

HAND: the two masked updates become `l = l - ((u > 0) * (l == u)).long()` and
`u = u + ((l < (self.atoms - 1)) * (l == u)).long()` (same integers; the second mask still uses
the updated l).
"""
import math

import torch
from torch import nn
from torch.nn import functional as F

KIND = "bool-mask read-modify-write"
GRAD = True


class NoisyLinear(nn.Module):
    def __init__(self, in_features, out_features, std_init=0.5):
        super(NoisyLinear, self).__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.std_init = std_init
        self.weight_mu = nn.Parameter(torch.empty(out_features, in_features))
        self.weight_sigma = nn.Parameter(torch.empty(out_features, in_features))
        self.register_buffer('weight_epsilon', torch.empty(out_features, in_features))
        self.bias_mu = nn.Parameter(torch.empty(out_features))
        self.bias_sigma = nn.Parameter(torch.empty(out_features))
        self.register_buffer('bias_epsilon', torch.empty(out_features))
        self.reset_parameters()
        self.reset_noise()

    def reset_parameters(self):
        mu_range = 1 / math.sqrt(self.in_features)
        self.weight_mu.data.uniform_(-mu_range, mu_range)
        self.weight_sigma.data.fill_(self.std_init / math.sqrt(self.in_features))
        self.bias_mu.data.uniform_(-mu_range, mu_range)
        self.bias_sigma.data.fill_(self.std_init / math.sqrt(self.out_features))

    def _scale_noise(self, size):
        x = torch.randn(size, device=self.weight_mu.device)
        return x.sign().mul_(x.abs().sqrt_())

    def reset_noise(self):
        epsilon_in = self._scale_noise(self.in_features)
        epsilon_out = self._scale_noise(self.out_features)
        self.weight_epsilon.copy_(epsilon_out.ger(epsilon_in))
        self.bias_epsilon.copy_(epsilon_out)

    def forward(self, input):
        if self.training:
            return F.linear(input, self.weight_mu + self.weight_sigma * self.weight_epsilon, self.bias_mu + self.bias_sigma * self.bias_epsilon)
        else:
            return F.linear(input, self.weight_mu, self.bias_mu)


class DQN(nn.Module):
    def __init__(self, obs_size, action_space, atoms, hidden_size=16, noisy_std=0.1):
        super(DQN, self).__init__()
        self.atoms = atoms
        self.action_space = action_space
        self.convs = nn.Sequential(nn.Linear(obs_size, 12), nn.ReLU())
        self.conv_output_size = 12
        self.fc_h_v = NoisyLinear(self.conv_output_size, hidden_size, std_init=noisy_std)
        self.fc_h_a = NoisyLinear(self.conv_output_size, hidden_size, std_init=noisy_std)
        self.fc_z_v = NoisyLinear(hidden_size, self.atoms, std_init=noisy_std)
        self.fc_z_a = NoisyLinear(hidden_size, action_space * self.atoms, std_init=noisy_std)

    def forward(self, x, log=False):
        x = self.convs(x)
        x = x.view(-1, self.conv_output_size)
        v = self.fc_z_v(F.relu(self.fc_h_v(x)))  # Value stream
        a = self.fc_z_a(F.relu(self.fc_h_a(x)))  # Advantage stream
        v, a = v.view(-1, 1, self.atoms), a.view(-1, self.action_space, self.atoms)
        q = v + a - a.mean(1, keepdim=True)  # Combine streams
        if log:  # Use log softmax for numerical stability
            q = F.log_softmax(q, dim=2)  # Log probabilities with action over second dimension
        else:
            q = F.softmax(q, dim=2)  # Probabilities with action over second dimension
        return q

    def reset_noise(self):
        for name, module in self.named_children():
            if 'fc' in name:
                module.reset_noise()


class Agent(nn.Module):
    def __init__(self, obs_size=8, action_space=3, atoms=11, V_min=-5.0, V_max=5.0, batch_size=4, multi_step=3, discount=0.9):
        super().__init__()
        self.action_space = action_space
        self.atoms = atoms
        self.Vmin = V_min
        self.Vmax = V_max
        self.register_buffer('support', torch.linspace(V_min, V_max, self.atoms))  # Support (range) of z
        self.delta_z = (V_max - V_min) / (self.atoms - 1)
        self.batch_size = batch_size
        self.n = multi_step
        self.discount = discount

        self.online_net = DQN(obs_size, action_space, atoms)
        self.online_net.train()
        self.target_net = DQN(obs_size, action_space, atoms)
        self.target_net.load_state_dict(self.online_net.state_dict())
        self.target_net.train()
        for param in self.target_net.parameters():
            param.requires_grad = False

    def forward(self, states, actions, returns, next_states, nonterminals, weights):
        # Calculate current state probabilities (online network noise already sampled)
        log_ps = self.online_net(states, log=True)  # Log probabilities log p(s_t, ·; θonline)
        log_ps_a = log_ps[range(self.batch_size), actions]  # log p(s_t, a_t; θonline)

        with torch.no_grad():
            # Calculate nth next state probabilities
            pns = self.online_net(next_states)  # Probabilities p(s_t+n, ·; θonline)
            dns = self.support.expand_as(pns) * pns  # Distribution d_t+n = (z, p(s_t+n, ·; θonline))
            argmax_indices_ns = dns.sum(2).argmax(1)  # Perform argmax action selection using online network: argmax_a[(z, p(s_t+n, a; θonline))]
            self.target_net.reset_noise()  # Sample new target net noise
            pns = self.target_net(next_states)  # Probabilities p(s_t+n, ·; θtarget)
            pns_a = pns[range(self.batch_size), argmax_indices_ns]  # Double-Q probabilities p(s_t+n, argmax_a[(z, p(s_t+n, a; θonline))]; θtarget)

            # Compute Tz (Bellman operator T applied to z)
            Tz = returns.unsqueeze(1) + nonterminals * (self.discount ** self.n) * self.support.unsqueeze(0)  # Tz = R^n + (γ^n)z (accounting for terminal states)
            Tz = Tz.clamp(min=self.Vmin, max=self.Vmax)  # Clamp between supported values
            # Compute L2 projection of Tz onto fixed support z
            b = (Tz - self.Vmin) / self.delta_z  # b = (Tz - Vmin) / Δz
            l, u = b.floor().to(torch.int64), b.ceil().to(torch.int64)
            # Fix disappearing probability mass when l = b = u (b is int)
            l = l - ((u > 0) * (l == u)).long()
            u = u + ((l < (self.atoms - 1)) * (l == u)).long()

            # Distribute probability of Tz
            m = states.new_zeros(self.batch_size, self.atoms)
            offset = torch.linspace(0, ((self.batch_size - 1) * self.atoms), self.batch_size).unsqueeze(1).expand(self.batch_size, self.atoms).to(actions)
            m.view(-1).index_add_(0, (l + offset).view(-1), (pns_a * (u.float() - b)).view(-1))  # m_l = m_l + p(s_t+n, a*)(u - b)
            m.view(-1).index_add_(0, (u + offset).view(-1), (pns_a * (b - l.float())).view(-1))  # m_u = m_u + p(s_t+n, a*)(b - l)

        loss = -torch.sum(m * log_ps_a, 1)  # Cross-entropy loss (minimises DKL(m||p(s_t, a_t)))
        return (weights * loss).mean(), loss


def make():
    torch.manual_seed(0)
    return Agent()


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for i in range(9):
        states = torch.randn(4, 8, generator=g)
        next_states = torch.randn(4, 8, generator=g)
        actions = torch.randint(0, 3, (4,), generator=g)
        if i % 3 == 0:
            # terminal transitions with integer returns: b is an integer, l == u
            returns = torch.randint(-6, 7, (4,), generator=g).float()
            nonterminals = torch.zeros(4, 1)
        elif i % 3 == 1:
            returns = 3.0 * torch.randn(4, generator=g)
            nonterminals = torch.ones(4, 1)
        else:
            returns = torch.tensor([-5.0, 5.0, 0.0, 2.0])
            nonterminals = torch.tensor([[0.0], [0.0], [1.0], [0.0]])
        weights = torch.rand(4, generator=g)
        out.append((states, actions, returns, next_states, nonterminals, weights))
    return out
