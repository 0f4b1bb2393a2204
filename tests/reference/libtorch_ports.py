"""The programs of tests/api/libtorch_port_models_test.cpp, in PyTorch: each
model's initial parameters, its inputs, and what a few training steps
compute (outputs, loss, gradients, the parameters after the steps), so the
ported C++ programs are checked for their numbers. Dropout layers are in
the models, as the programs have them, and the steps run in eval mode
(dropout off), since two frameworks' random masks cannot agree.

Names in libtorch_ports.txt (float32, as the programs run), per program p
of mnist, word_lm, encoder:
  p.param.<name>         the initial parameters, under PyTorch's names
  p.in.<x>               the inputs (p.in.target: the labels or next words)
  p.out.<k>              step 1's outputs (logits, h_n, c_n, ...)
  p.loss.<s>             the loss of step s (from 1)
  p.grad.<name>          step 1's gradient of each parameter
  p.final.<name>         each parameter after the last step
"""

import zlib

import torch

from golden import GoldenFile

nn = torch.nn
F = torch.nn.functional
STEPS = 3


def randn(name, *shape):
    gen = torch.Generator().manual_seed(zlib.crc32(name.encode()))
    return torch.randn(tuple(shape), generator=gen)


def randint(name, high, *shape):
    gen = torch.Generator().manual_seed(zlib.crc32(name.encode()))
    return torch.randint(high, tuple(shape), generator=gen)


# pytorch/examples cpp/mnist's Net.
class MnistNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, 5)
        self.conv2 = nn.Conv2d(10, 20, 5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, p=0.5, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


# pytorch/examples word_language_model's RNNModel (LSTM, untied).
class WordLanguageModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers):
        super().__init__()
        self.drop = nn.Dropout(0.2)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=0.2)
        self.decoder = nn.Linear(nhid, ntoken)

    def forward(self, tokens, hidden):
        emb = self.drop(self.encoder(tokens))
        output, hidden = self.rnn(emb, hidden)
        return self.decoder(self.drop(output)), hidden


# A sequence classifier over a transformer encoder with a causal mask.
class EncoderClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(6, 16)
        layer = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, dropout=0.1)
        self.encoder = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(16, 3)

    def forward(self, x, mask):
        h = self.encoder(self.embed(x), mask)
        return self.head(h.mean(0))


def record(golden, prefix, model, inputs, step_fn, optimizer):
    for name, p in model.named_parameters():
        golden.add(f"{prefix}.param.{name}", p)
    for name, x in inputs.items():
        golden.add(f"{prefix}.in.{name}", x)
    model.eval()
    for step in range(1, STEPS + 1):
        optimizer.zero_grad()
        outputs, loss = step_fn()
        loss.backward()
        if step == 1:
            for k, out in outputs.items():
                golden.add(f"{prefix}.out.{k}", out)
            for name, p in model.named_parameters():
                golden.add(f"{prefix}.grad.{name}", p.grad)
        golden.add(f"{prefix}.loss.{step}", loss)
        optimizer.step()
    for name, p in model.named_parameters():
        golden.add(f"{prefix}.final.{name}", p)


def mnist(golden):
    torch.manual_seed(1)
    model = MnistNet()
    x = randn("mnist.data", 8, 1, 28, 28)
    target = randint("mnist.target", 10, 8)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.5)

    def step():
        output = model(x)
        return {"output": output}, F.nll_loss(output, target)

    record(golden, "mnist", model, {"data": x, "target": target}, step, optimizer)


def word_lm(golden):
    torch.manual_seed(2)
    model = WordLanguageModel(ntoken=50, ninp=12, nhid=16, nlayers=2)
    tokens = randint("word_lm.tokens", 50, 7, 4)
    target = randint("word_lm.target", 50, 7 * 4)
    h0 = randn("word_lm.h0", 2, 4, 16)
    c0 = randn("word_lm.c0", 2, 4, 16)
    optimizer = torch.optim.SGD(model.parameters(), lr=20)

    def step():
        output, (h, c) = model(tokens, (h0, c0))
        loss = F.cross_entropy(output.view(-1, 50), target)
        return {"output": output, "h_n": h, "c_n": c}, loss

    # The example clips the gradients between backward and the step.
    class ClippedSGD:
        def zero_grad(self):
            optimizer.zero_grad()

        def step(self):
            nn.utils.clip_grad_norm_(model.parameters(), 0.25)
            optimizer.step()

    inputs = {"tokens": tokens, "target": target, "h0": h0, "c0": c0}
    record(golden, "word_lm", model, inputs, step, ClippedSGD())


def encoder(golden):
    torch.manual_seed(3)
    model = EncoderClassifier()
    x = randn("encoder.x", 5, 4, 6)
    target = randint("encoder.target", 3, 4)
    mask = nn.Transformer.generate_square_subsequent_mask(5)
    # Not Adam: the key projection's bias has a gradient of zero in exact
    # arithmetic (softmax ignores a shift shared by all keys), and Adam
    # turns its rounding noise into steps of +-lr whose sign is chance.
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    def step():
        logits = model(x, mask)
        return {"logits": logits}, F.cross_entropy(logits, target)

    record(golden, "encoder", model, {"x": x, "target": target}, step, optimizer)


def write_all(outdir):
    golden = GoldenFile()
    mnist(golden)
    word_lm(golden)
    encoder(golden)
    golden.write(outdir, "libtorch_ports.txt")


if __name__ == "__main__":
    import sys

    torch.set_num_threads(1)
    write_all(sys.argv[1])
