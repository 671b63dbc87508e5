"""DuoRec calculate_loss / info_nce -- hand rewrite.

Source: https://github.com/RuihongQiu/DuoRec/blob/master/recbole/model/sequential_recommender/duorec.py
HAND: gather the N-2 kept columns per row (stable argsort of ~mask) instead of sim[mask].
"""
import torch
from torch import nn

KIND = "bool-mask gather"
GRAD = True


class DuoRec(nn.Module):
    def __init__(self, n_items=12, hidden_size=8, batch_size=4, tau=1.0, sim="dot", lmd_sem=0.1):
        super().__init__()
        self.n_items = n_items
        self.batch_size = batch_size
        self.tau = tau
        self.sim = sim
        self.lmd_sem = lmd_sem
        self.ssl = "su"
        self.loss_type = "CE"
        self.ITEM_SEQ = "item_id_list"
        self.ITEM_SEQ_LEN = "item_length"
        self.POS_ITEM_ID = "item_id"
        self.item_embedding = nn.Embedding(n_items, hidden_size, padding_idx=0)
        self.encoder = nn.Linear(hidden_size, hidden_size)
        self.loss_fct = nn.CrossEntropyLoss()
        self.aug_nce_fct = nn.CrossEntropyLoss()
        self.mask_default = self.mask_correlated_samples(batch_size=batch_size)

    def gather_indexes(self, output, gather_index):
        """Gathers the vectors at the specific positions over a minibatch"""
        gather_index = gather_index.view(-1, 1, 1).expand(-1, -1, output.shape[-1])
        output_tensor = output.gather(dim=1, index=gather_index)
        return output_tensor.squeeze(1)

    def forward(self, item_seq, item_seq_len):
        item_emb = self.item_embedding(item_seq)
        output = torch.tanh(self.encoder(item_emb.cumsum(1)))
        output = self.gather_indexes(output, item_seq_len - 1)
        return output  # [B H]

    def calculate_loss(self, interaction):
        item_seq = interaction[self.ITEM_SEQ]
        item_seq_len = interaction[self.ITEM_SEQ_LEN]
        seq_output = self.forward(item_seq, item_seq_len)
        pos_items = interaction[self.POS_ITEM_ID]
        test_item_emb = self.item_embedding.weight
        logits = torch.matmul(seq_output, test_item_emb.transpose(0, 1))
        loss = self.loss_fct(logits, pos_items)

        # Supervised NCE
        if self.ssl in ['us', 'su']:
            sem_aug, sem_aug_lengths = interaction['sem_aug'], interaction['sem_aug_lengths']
            sem_aug_seq_output = self.forward(sem_aug, sem_aug_lengths)

            sem_nce_logits, sem_nce_labels = self.info_nce(seq_output, sem_aug_seq_output, temp=self.tau,
                                                           batch_size=item_seq_len.shape[0], sim=self.sim)

            loss += self.lmd_sem * self.aug_nce_fct(sem_nce_logits, sem_nce_labels)
        return loss

    def mask_correlated_samples(self, batch_size):
        N = 2 * batch_size
        mask = torch.ones((N, N), dtype=bool)
        mask = mask.fill_diagonal_(0)
        for i in range(batch_size):
            mask[i, batch_size + i] = 0
            mask[batch_size + i, i] = 0
        return mask

    def info_nce(self, z_i, z_j, temp, batch_size, sim='dot'):
        N = 2 * batch_size

        z = torch.cat((z_i, z_j), dim=0)

        if sim == 'cos':
            sim = nn.functional.cosine_similarity(z.unsqueeze(1), z.unsqueeze(0), dim=2) / temp
        elif sim == 'dot':
            sim = torch.mm(z, z.T) / temp

        sim_i_j = torch.diag(sim, batch_size)
        sim_j_i = torch.diag(sim, -batch_size)

        positive_samples = torch.cat((sim_i_j, sim_j_i), dim=0).reshape(N, 1)
        if batch_size != self.batch_size:
            mask = self.mask_correlated_samples(batch_size)
        else:
            mask = self.mask_default
        keep = torch.argsort((~mask).to(torch.uint8), dim=1, stable=True)[:, :N - 2]
        negative_samples = torch.gather(sim, 1, keep)

        labels = torch.zeros(N).to(positive_samples.device).long()
        logits = torch.cat((positive_samples, negative_samples), dim=1)
        return logits, labels


def make():
    torch.manual_seed(0)
    return DuoRec().calculate_loss


def _interaction(b, L, seed):
    g = torch.Generator().manual_seed(seed)
    return {
        "item_id_list": torch.randint(1, 12, (b, L), generator=g),
        "item_length": torch.randint(1, L + 1, (b,), generator=g),
        "item_id": torch.randint(1, 12, (b,), generator=g),
        "sem_aug": torch.randint(1, 12, (b, L), generator=g),
        "sem_aug_lengths": torch.randint(1, L + 1, (b,), generator=g),
    }


def inputs():
    return [
        (_interaction(4, 5, 1),),      # batch_size == self.batch_size -> mask_default
        (_interaction(4, 3, 2),),
        (_interaction(3, 5, 3),),      # last, smaller batch -> rebuilt mask
        (_interaction(2, 4, 4),),
        (_interaction(1, 2, 5),),
        (_interaction(4, 6, 6),),
        (_interaction(5, 3, 7),),
        (_interaction(3, 2, 8),),
    ]
