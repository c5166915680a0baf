#!/usr/bin/env python3
"""An independent phone for LockBench's BLE lock, built on Bumble's own host.

Scans for a lock advertising service FFF2, connects, discovers with Bumble's GATT client,
reads the SPSM characteristic, writes the selected version, opens an LE credit-based channel
and answers the lock's framed command APDUs ([type][id][len2 BE][payload]) with a credential,
until the lock's [02][03] "completed" notification. Prints one JSON object on stdout.

Credentials: `echo` (LockBench's echo flow), `echo-refuse` (refuses ECHO with 6982), and
`protocol`: the access protocol's credential side (protocol_credential.py, written from
docs/protocol.md alone) with --key KEY.pem --document DOC.cbor… --lock-config lock.json.

The `protocol` credential behaves as the reference phone over BLE: it sends "initiate access
protocol" (02 05) as soon as the channel is open and opens the lock's completed notification under
BleSKReader. --version-write HEX writes another value to the version characteristic and
--psm-offset N asks for the channel on SPSM + N: the script then reports how the lock answered the
LE credit-based connection request (`channel_result`) and stops.

Usage: bumble_phone.py tcp-client:127.0.0.1:PORT --credential echo|echo-refuse|protocol …
"""
import argparse
import asyncio
import json
import struct
import sys
import time

from bumble import hci, l2cap
from bumble.core import AdvertisingData, UUID
from bumble.device import Device, Peer
from bumble.transport import open_transport

# The lock speaks first on the channel (it sends SELECT as soon as the channel is open), as an
# Aliro reader does. Phone OSes buffer a new channel's input until the app reads; Bumble drops
# SDUs that arrive before `channel.sink` is set, so give every new channel a buffering sink
# that the script replays once it has the channel object.
_original_init = l2cap.LeCreditBasedChannel.__init__


def _buffering_init(self, *args, **kwargs):
    _original_init(self, *args, **kwargs)
    self.early_sdus = []
    self.sink = self.early_sdus.append


l2cap.LeCreditBasedChannel.__init__ = _buffering_init

SERVICE = UUID.from_16_bits(0xFFF2)
SPSM_CHAR = UUID('D3B5A130-9E23-4B3A-8BE4-6B1EE5F980A3')
VERSION_CHAR = UUID('BD4B9502-3F54-11EC-B919-0242AC120005')
ALIRO_AID = bytes.fromhex('A000000909ACCE5501')


class EchoCredential:
    """The credential side of LockBench's echo flow (docs/ble.md)."""

    def __init__(self, refuse=False):
        self.refuse = refuse
        self.selected = False

    def respond(self, apdu: bytes) -> bytes:
        if len(apdu) < 4:
            return bytes.fromhex('6700')
        cla, ins = apdu[0], apdu[1]
        if (cla, ins) == (0x00, 0xA4):
            if apdu[5:5 + len(ALIRO_AID)] != ALIRO_AID:
                return bytes.fromhex('6A82')
            self.selected = True
            return bytes([0x6F, 0x0D, 0x84, 0x09]) + ALIRO_AID + bytes.fromhex('A500') + bytes.fromhex('9000')
        if (cla, ins) == (0x80, 0xEE):
            if not self.selected:
                return bytes.fromhex('6985')
            if self.refuse:
                return bytes.fromhex('6982')
            n = apdu[4]
            return apdu[5:5 + n] + bytes.fromhex('9000')
        return bytes.fromhex('6D00')


def make_credential(args):
    if args.credential == 'echo':
        return EchoCredential()
    if args.credential == 'echo-refuse':
        return EchoCredential(refuse=True)
    import protocol_credential  # the access protocol's credential, written from docs/protocol.md
    return protocol_credential.make(args.credential, key=args.key, documents=args.document, lock_config=args.lock_config)


def frame(kind, ident, payload):
    return bytes([kind, ident]) + struct.pack('>H', len(payload)) + payload


async def run(args):
    result = {'ok': False}
    async with await open_transport(args.transport) as (source, sink):
        device = Device.with_hci('Bumble Phone', hci.Address('F0:F1:F2:F3:F4:F5'), source, sink)
        await device.power_on()

        found = asyncio.get_running_loop().create_future()

        def on_advertisement(adv):
            for uuid, _data in adv.data.get_all(AdvertisingData.SERVICE_DATA_16_BIT_UUID) or []:
                if uuid == SERVICE and not found.done():
                    found.set_result(adv)

        device.on('advertisement', on_advertisement)
        await device.start_scanning(filter_duplicates=False)
        adv = await asyncio.wait_for(found, args.timeout)
        await device.stop_scanning()
        service_data = [d for u, d in adv.data.get_all(AdvertisingData.SERVICE_DATA_16_BIT_UUID) if u == SERVICE][0]
        result['lock_address'] = str(adv.address)
        result['service_data'] = service_data.hex()

        t0 = time.monotonic()
        connection = await device.connect(adv.address, timeout=args.timeout)
        result['connect_ms'] = round((time.monotonic() - t0) * 1000, 1)
        peer = Peer(connection)
        result['mtu'] = await peer.request_mtu(247)
        await peer.discover_services()
        result['services'] = [str(s.uuid) for s in peer.services]
        lock_services = peer.get_services_by_uuid(SERVICE)
        assert lock_services, 'no FFF2 service'
        await lock_services[0].discover_characteristics()
        spsm = lock_services[0].get_characteristics_by_uuid(SPSM_CHAR)[0]
        version = lock_services[0].get_characteristics_by_uuid(VERSION_CHAR)[0]
        spsm_value = bytes(await spsm.read_value())
        result['spsm_value'] = spsm_value.hex()
        psm = struct.unpack('>H', spsm_value[:2])[0]
        await version.write_value(bytes.fromhex(args.version_write), with_response=True)

        if args.try_pair:
            # The lock does not pair (its security is in the access protocol): Bumble's SMP must
            # get Pairing Failed, and the link must stay usable.
            try:
                await asyncio.wait_for(connection.pair(), args.timeout)
                result['pairing'] = 'paired'
            except Exception as e:  # Bumble raises a protocol error carrying the SMP reason
                result['pairing'] = f'{type(e).__name__}: {e}'

        credential = make_credential(args)
        done = asyncio.get_running_loop().create_future()
        transcript = []

        if args.version_write != '0100' or args.psm_offset:
            # How the lock answers the LE credit-based connection request (BLERKE_RDR_NEG_FAILED_L2CAP,
            # BLERKE_RDR_NEG_FAILED_SPSM_L2CAP).
            try:
                probe = await asyncio.wait_for(connection.create_l2cap_channel(
                    spec=l2cap.LeCreditBasedChannelSpec(psm=psm + args.psm_offset, mtu=1024, mps=247, max_credits=8)), args.timeout)
                result['channel_result'] = 0
                await probe.disconnect()
            except Exception as e:  # Bumble raises L2capError carrying the response's result
                result['channel_result'] = getattr(e, 'error_code', None)
                result['channel_error'] = f'{type(e).__name__}: {e}'
            result['ok'] = True
            await connection.disconnect()
            return result

        channel = await connection.create_l2cap_channel(
            spec=l2cap.LeCreditBasedChannelSpec(psm=psm, mtu=1024, mps=247, max_credits=8))

        def on_sdu(sdu):
            sdu = bytes(sdu)
            kind, ident, length = sdu[0], sdu[1], struct.unpack('>H', sdu[2:4])[0]
            payload = sdu[4:4 + length]
            if (kind, ident) == (0x00, 0x00):
                response = credential.respond(payload)
                transcript.append({'command': payload.hex(), 'response': response.hex()})
                channel.write(frame(0x00, 0x01, response))
            elif (kind, ident) == (0x02, 0x03) and not done.done():
                if hasattr(credential, 'open_completed'):
                    credential.open_completed(payload)
                done.set_result(payload)
            elif (kind, ident) == (0x02, 0x00) and not done.done():
                result['event'] = payload.hex()
                done.set_result(None)

        channel.sink = on_sdu
        if hasattr(credential, 'initiate'):
            initiate = frame(0x02, 0x05, credential.initiate())
            result['initiate'] = initiate.hex()
            channel.write(initiate)
        for early in channel.early_sdus:
            on_sdu(early)
        completion = await asyncio.wait_for(done, args.timeout)
        result['completion'] = completion.hex() if completion is not None else None
        result['transcript'] = transcript
        result['commands'] = len(transcript)
        if hasattr(credential, 'summary'):
            result['credential'] = credential.summary()
        result['ok'] = True
        await connection.disconnect()
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('transport')
    parser.add_argument('--credential', default='echo')
    parser.add_argument('--timeout', type=float, default=10.0)
    parser.add_argument('--try-pair', action='store_true', help='attempt SMP pairing first (the lock refuses)')
    parser.add_argument('--key', help='protocol credential: private key (PEM)')
    parser.add_argument('--document', action='append', default=[], help='protocol credential: access/revocation document (CBOR)')
    parser.add_argument('--lock-config', help='protocol credential: trust the reader of this lock.json')
    parser.add_argument('--version-write', default='0100', help='value written to the version characteristic (hex)')
    parser.add_argument('--psm-offset', type=int, default=0, help='ask for the channel on SPSM + N and report the result')
    args = parser.parse_args()
    try:
        result = asyncio.run(run(args))
    except Exception as e:  # report, do not hide
        result = {'ok': False, 'error': f'{type(e).__name__}: {e}'}
    print(json.dumps(result))
    sys.exit(0 if result.get('ok') else 1)


if __name__ == '__main__':
    main()
