"""The domain-free core: masked-model protocol, ground-truth MI, the MI head, samplers, benchmarks."""
