"""Every function of every corpus module decodes into iree-dump-module's op sequence (and text).

The corpus (tests/corpus/*.mlir, compiled at test time) is what `amdgpu-run` is judged on; this is
the decoder's side of that judgement: for each function, the mnemonics our decoder reads, in
order, equal those `iree-dump-module --output=disassembly` prints, and so does the full line text
with operands. Every function also passes our verifier.
"""

from __future__ import annotations

import pytest

from amdgpu_cli.formats.vmfb import load_vmfb
from amdgpu_cli.vm.decoder import verify
from amdgpu_cli.vm.disassembler import disassemble

from .test_decoder import _mnemonics, dump_functions


def test_corpus_functions_decode_as_iree_dump_module(corpus_build):
    vmfbs, errors = corpus_build
    assert not errors
    checked = 0
    for stem, path in sorted(vmfbs.items()):
        module = load_vmfb(path)
        dumped = dump_functions(path)
        assert len(dumped) == len(module.functions), stem
        for ordinal, (header, expected) in enumerate(dumped):
            verify(module, ordinal)
            ours = disassemble(module, ordinal, offsets=True)
            assert _mnemonics(ours) == _mnemonics(expected), f"{stem} function {ordinal} ({header})"
            assert ours == expected, f"{stem} function {ordinal} ({header})"
            checked += 1
    assert checked >= len(vmfbs)
    print(f"{checked} functions in {len(vmfbs)} corpus modules match iree-dump-module")
