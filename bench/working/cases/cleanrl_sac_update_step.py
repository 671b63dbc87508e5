"""CleanRL SAC (continuous actions) update step compiled whole: critic/actor/temperature updates with
``backward()``, optimizer steps, ``alpha = log_alpha.exp().item()`` and ``.data`` Polyak updates.

The body of CleanRL's training loop after ``rb.sample`` kept as in the source (soft Q targets with
``alpha * next_state_log_pi``, the two critics' MSE, ``backward``/``step``, the delayed actor update
loop ``for _ in range(args.policy_frequency)`` with the autotuned temperature ending in
``alpha = log_alpha.exp().item()``, then the Polyak update of the target critics through
``.data``), held in one module so the step can be compiled; Actor and SoftQNetwork are CleanRL's
with small layers. ``alpha`` lives on the agent between steps, as the script's loop variable does.

Source: https://github.com/vwxyzjn/cleanrl/blob/master/cleanrl/sac_continuous_action.py

Breaks: ``optimizer.zero_grad()`` / ``Tensor.backward()`` / ``optimizer.step()`` (skipped functions,
``Tensor.backward``, dynamo's own ``graph_break()`` in the optimizer); the break inside the
``for _ in range(policy_frequency)`` loop makes dynamo skip that frame, so the
``log_alpha.exp().item()`` read runs eagerly and is not reported.

HAND: none — the step's ``backward()`` calls and optimizer steps are the program (parameters and
optimizer state change in place between the losses); dynamo does not trace ``Tensor.backward``,
and computing the same updates another way (``torch.func``) is not the same program.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

LOG_STD_MAX = 2
LOG_STD_MIN = -5


class SoftQNetwork(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim + act_dim, 16)
        self.fc2 = nn.Linear(16, 16)
        self.fc3 = nn.Linear(16, 1)

    def forward(self, x, a):
        x = torch.cat([x, a], 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim, low=-2.0, high=2.0):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim, 16)
        self.fc2 = nn.Linear(16, 16)
        self.fc_mean = nn.Linear(16, act_dim)
        self.fc_logstd = nn.Linear(16, act_dim)
        # action rescaling
        self.register_buffer("action_scale", torch.tensor((high - low) / 2.0, dtype=torch.float32))
        self.register_buffer("action_bias", torch.tensor((high + low) / 2.0, dtype=torch.float32))

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        mean = self.fc_mean(x)
        log_std = self.fc_logstd(x)
        log_std = torch.tanh(log_std)
        log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (log_std + 1)  # From SpinUp / Denis Yarats

        return mean, log_std

    def get_action(self, x):
        mean, log_std = self(x)
        std = log_std.exp()
        normal = torch.distributions.Normal(mean, std)
        x_t = normal.rsample()  # for reparameterization trick (mean + std * N(0,1))
        y_t = torch.tanh(x_t)
        action = y_t * self.action_scale + self.action_bias
        log_prob = normal.log_prob(x_t)
        # Enforcing Action Bound
        log_prob -= torch.log(self.action_scale * (1 - y_t.pow(2)) + 1e-6)
        log_prob = log_prob.sum(1, keepdim=True)
        mean = torch.tanh(mean) * self.action_scale + self.action_bias
        return action, log_prob, mean


class SACAgent(nn.Module):
    def __init__(self, obs_dim=3, act_dim=1, gamma=0.99, tau=0.005, policy_frequency=2, target_network_frequency=1):
        super().__init__()
        self.gamma, self.tau = gamma, tau
        self.policy_frequency, self.target_network_frequency = policy_frequency, target_network_frequency
        self.actor = Actor(obs_dim, act_dim)
        self.qf1 = SoftQNetwork(obs_dim, act_dim)
        self.qf2 = SoftQNetwork(obs_dim, act_dim)
        self.qf1_target = SoftQNetwork(obs_dim, act_dim)
        self.qf2_target = SoftQNetwork(obs_dim, act_dim)
        self.qf1_target.load_state_dict(self.qf1.state_dict())
        self.qf2_target.load_state_dict(self.qf2.state_dict())
        self.q_optimizer = optim.Adam(list(self.qf1.parameters()) + list(self.qf2.parameters()), lr=1e-3)
        self.actor_optimizer = optim.Adam(list(self.actor.parameters()), lr=3e-4)
        # Automatic entropy tuning
        self.target_entropy = -float(act_dim)
        self.log_alpha = nn.Parameter(torch.zeros(1))
        self.alpha = self.log_alpha.exp().item()
        self.a_optimizer = optim.Adam([self.log_alpha], lr=1e-3)

    def forward(self, observations, actions, rewards, next_observations, dones, global_step):
        actor, qf1, qf2, qf1_target, qf2_target = self.actor, self.qf1, self.qf2, self.qf1_target, self.qf2_target
        log_alpha, alpha, target_entropy = self.log_alpha, self.alpha, self.target_entropy
        with torch.no_grad():
            next_state_actions, next_state_log_pi, _ = actor.get_action(next_observations)
            qf1_next_target = qf1_target(next_observations, next_state_actions)
            qf2_next_target = qf2_target(next_observations, next_state_actions)
            min_qf_next_target = torch.min(qf1_next_target, qf2_next_target) - alpha * next_state_log_pi
            next_q_value = rewards.flatten() + (1 - dones.flatten()) * self.gamma * (min_qf_next_target).view(-1)

        qf1_a_values = qf1(observations, actions).view(-1)
        qf2_a_values = qf2(observations, actions).view(-1)
        qf1_loss = F.mse_loss(qf1_a_values, next_q_value)
        qf2_loss = F.mse_loss(qf2_a_values, next_q_value)
        qf_loss = qf1_loss + qf2_loss

        # optimize the model
        self.q_optimizer.zero_grad()
        qf_loss.backward()
        self.q_optimizer.step()

        actor_loss = alpha_loss = torch.zeros(())
        if global_step % self.policy_frequency == 0:  # TD 3 Delayed update support
            for _ in range(self.policy_frequency):  # compensate for the delay by doing 'actor_update_interval' instead of 1
                pi, log_pi, _ = actor.get_action(observations)
                qf1_pi = qf1(observations, pi)
                qf2_pi = qf2(observations, pi)
                min_qf_pi = torch.min(qf1_pi, qf2_pi)
                actor_loss = ((alpha * log_pi) - min_qf_pi).mean()

                self.actor_optimizer.zero_grad()
                actor_loss.backward()
                self.actor_optimizer.step()

                with torch.no_grad():
                    _, log_pi, _ = actor.get_action(observations)
                alpha_loss = (-log_alpha.exp() * (log_pi + target_entropy)).mean()

                self.a_optimizer.zero_grad()
                alpha_loss.backward()
                self.a_optimizer.step()
                alpha = log_alpha.exp().item()
            self.alpha = alpha

        # update the target networks
        if global_step % self.target_network_frequency == 0:
            for param, target_param in zip(qf1.parameters(), qf1_target.parameters()):
                target_param.data.copy_(self.tau * param.data + (1 - self.tau) * target_param.data)
            for param, target_param in zip(qf2.parameters(), qf2_target.parameters()):
                target_param.data.copy_(self.tau * param.data + (1 - self.tau) * target_param.data)

        return qf_loss.detach(), actor_loss.detach(), alpha_loss.detach()


def make():
    torch.manual_seed(0)
    return SACAgent()


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for step, b in enumerate([4, 8, 4, 2, 6, 4, 8, 3]):
        obs = torch.randn(b, 3, generator=g)
        act = torch.rand(b, 1, generator=g) * 4 - 2
        rew = torch.randn(b, generator=g)
        nobs = torch.randn(b, 3, generator=g)
        done = (torch.rand(b, generator=g) < 0.2).float()
        out.append((obs, act, rew, nobs, done, step))
    return out


KIND = "backward-optimizer"
