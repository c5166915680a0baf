#!/usr/bin/env python3
"""Replays the test vectors of docs/protocol.md §16 (read from the document) against
ProtocolCredential: every response byte must match. Run: python3 protocol_credential.py --self-test"""
import os
import re

from cryptography.hazmat.primitives.asymmetric import ec

import protocol_credential as pc

SPEC = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'docs', 'protocol.md')


def load_vectors(path=SPEC):
    """The §16 vectors, read from the specification itself (the one source of truth)."""
    with open(path) as f:
        doc = f.read()
    v = doc[doc.index('<!-- vectors:begin -->'):doc.index('<!-- vectors:end -->')]
    out = {}
    for section in re.split(r'^### ', v, flags=re.M)[1:]:
        title = section.split('\n', 1)[0].strip()
        values = dict(re.findall(r'^([a-z_.]+(?: \([^)]*\))?) = ([0-9a-f]+)$', section, flags=re.M))
        apdus = re.findall(r'^([CR]) (.+?)\s+([0-9a-f]{4,})$', section, flags=re.M)
        out[title] = {'values': values, 'apdus': [[d, n.strip(), h] for d, n, h in apdus]}
    return out


VECTORS = load_vectors()


def key(hexscalar):
    return ec.derive_private_key(int(hexscalar, 16), ec.SECP256R1())


def run(title, kpersistent=None):
    inputs = VECTORS['Inputs']['values']
    t = VECTORS[title]['values']
    reader = key(inputs['reader.private_key'])
    assert pc.point(reader.public_key()).hex() == inputs['reader.public_key']
    signature = {'Standard transaction': 'standard.device_signature',
                 'Step-up transaction': 'stepup.device_signature'}.get(title)
    credential = pc.ProtocolCredential(
        key(inputs['credential.private_key']),
        [(bytes.fromhex(inputs['reader.group_id']), bytes.fromhex(inputs['reader.public_key']))],
        access_documents=[bytes.fromhex(inputs['access_document'])],
        interface=pc.INTERFACE_NFC,
        random_bytes=lambda n: bytes.fromhex(t['decoy_cryptogram']),
        ephemeral_keys=lambda: key(t['device_ephemeral.private_key']),
        signer=lambda message: bytes.fromhex(inputs[signature]))
    if kpersistent:
        reader_id = bytes.fromhex(inputs['reader.group_id'] + inputs['reader.sub_id'])
        credential.kpersistent[reader_id] = bytes.fromhex(kpersistent)
    apdus = VECTORS[title]['apdus']
    failures = 0
    for (d1, name, command), (d2, _, expected) in zip(apdus[0::2], apdus[1::2]):
        assert (d1, d2) == ('C', 'R')
        got = credential.respond(bytes.fromhex(command)).hex()
        if got != expected:
            failures += 1
            print(f'{title}: {name}: expected {expected}\n{" " * len(title)}  got      {got}')
    print(f'{title}: {len(apdus) // 2} responses, {failures} different')
    return failures


def main():
    assert {'Standard transaction', 'FAST transaction', 'Step-up transaction'} <= set(VECTORS), 'vectors not found'
    failures = run('Standard transaction')
    failures += run('FAST transaction', VECTORS['FAST transaction']['values']['kpersistent (cached from the standard transaction)'])
    failures += run('Step-up transaction')
    return 1 if failures else 0


if __name__ == '__main__':
    raise SystemExit(main())
