// fuzz-module: VirtualPN532
// fuzz-sources: PN532Frame.swift PN532Chip.swift PN532Error.swift VirtualField.swift VirtualCard.swift SimpleCard.swift ExchangeResults.swift
// libFuzzer entry for the virtual PN532: what a libnfc client (or anything holding the pty) writes
// to the chip. Compiled into module `VirtualPN532` by Tests/Fuzz/fuzz.sh (without the pty and the
// reader: fuzz-sources), so it drives the internal chip directly, without a pty or the I/O
// thread, the way `VirtualReader.run` does.
//
// Input: byte 0 configures the field (bit 0 a card, bit 1 an external reader tapping the chip,
// bit 2 that reader already left, bit 3 a 4-byte UID instead of 7); byte 1 schedules the card
// leaving (low nibble: after that many frames, 0 never) and coming back (high nibble: that many
// frames later); the rest is the host → chip byte stream, fed to the frame decoder in chunks
// whose sizes derive from the input.
//
// Properties: the decoder finds the same frames whatever the chunking; a decoded command fits
// the chip's frame buffer and re-frames to itself; every command is answered by a well-formed
// reply frame (`D5 code+1 …`, checksums right, ≤ 265 bytes of TFI + data) or the error frame,
// possibly after waiting; a status byte, where libnfc reads one, exists and never has bit 7 set
// (libnfc 1.8.0 calls abort() on that).

import ByteCore
import Foundation

/// A card that answers like `SimpleCard`, plus `80 EF P1 P2` → (P1·4 + P2 mod 4) bytes ‖ 9000,
/// so responses longer than one frame (MI chaining) are reachable.
private final class FuzzCard: APDUResponder {
    private let simple = SimpleCard()

    func respond(to command: [UInt8]) -> [UInt8] {
        if command.count >= 4, command[0] == 0x80, command[1] == 0xEF {
            let n = Int(command[2]) << 2 | Int(command[3] & 0x03)
            return (0..<n).map { UInt8(truncatingIfNeeded: $0) } + [0x90, 0x00]
        }
        return simple.respond(to: command)
    }

    func reset() { simple.reset() }
}

/// Commands whose reply starts with a status byte that libnfc checks (`pn53x_transceive`).
private let statusCommands: Set<UInt8> = [
    PN532Command.powerDown, PN532Command.inDataExchange, PN532Command.inCommunicateThru, PN532Command.inJumpForPSL,
    PN532Command.inPSL, PN532Command.inATR, PN532Command.inSelect, PN532Command.inJumpForDEP, PN532Command.tgGetData,
    PN532Command.tgGetInitiatorCommand, PN532Command.tgSetData, PN532Command.tgResponseToInitiator,
    PN532Command.tgSetGeneralBytes, PN532Command.tgSetMetaData, PN532Command.inDeselect, PN532Command.inRelease,
]

/// Sizes 1…64 from a xorshift generator seeded by the input, so a crash reproduces from its file.
private struct Chunker {
    var state: UInt64
    mutating func next() -> Int {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        return Int(state % 64) + 1
    }
}

private func decodeAll(_ chunks: [ArraySlice<UInt8>]) -> (frames: [PN532HostFrame], buffered: Int) {
    var decoder = PN532FrameDecoder()
    var frames: [PN532HostFrame] = []
    for chunk in chunks {
        decoder.feed(chunk)
        while let frame = decoder.next() { frames.append(frame) }
    }
    return (frames, decoder.bufferedByteCount)
}

/// Checks one frame the chip writes in answer to `code` (sent with `data`).
private func checkReply(_ frame: [UInt8], code: UInt8, data: [UInt8]) {
    if frame == PN532Wire.errorFrame { return }
    guard frame.count >= 9, frame[0] == 0x00, frame[1] == 0x00, frame[2] == 0xFF, frame.last == 0x00 else {
        fatalError("reply to 0x\([code].hex) is not a frame: \(frame.hex)")
    }
    let length: Int, bodyStart: Int
    if frame[3] == 0xFF && frame[4] == 0xFF {
        guard frame[5] &+ frame[6] &+ frame[7] == 0 else { fatalError("extended reply: bad LCS \(frame.hex)") }
        length = Int(frame[5]) << 8 | Int(frame[6])
        bodyStart = 8
        guard length > 255 else { fatalError("extended form for a short reply: \(frame.hex)") }
    } else {
        guard frame[3] &+ frame[4] == 0 else { fatalError("reply: bad LCS \(frame.hex)") }
        length = Int(frame[3])
        bodyStart = 5
    }
    guard frame.count == bodyStart + length + 2 else { fatalError("reply length \(length) does not match \(frame.count) bytes") }
    guard length <= PN532Wire.maxBodyLength else { fatalError("reply of \(length) bytes overflows the 265-byte frame buffer") }
    let body = frame[bodyStart..<bodyStart + length]
    guard body.reduce(frame[bodyStart + length], &+) == 0 else { fatalError("reply: bad DCS \(frame.hex)") }
    guard body.first == PN532Wire.chipToHost, body.count >= 2, body[body.startIndex + 1] == code &+ 1 else {
        fatalError("reply to 0x\([code].hex) is not D5 \([code &+ 1].hex): \(frame.hex)")
    }
    let reply = body.dropFirst(2)
    if statusCommands.contains(code) || (code == PN532Command.diagnose && data.first == 0x06) {
        guard let status = reply.first else { fatalError("reply to 0x\([code].hex) has no status byte") }
        guard status & 0x80 == 0 else { fatalError("status 0x\([status].hex) with bit 7 set for 0x\([code].hex): libnfc aborts") }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPN532(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard bytes.count >= 2 else { return 0 }
    let config = bytes[0], schedule = bytes[1]
    let stream = bytes[2...]

    // The decoder: whole stream vs chunks.
    var chunker = Chunker(state: UInt64(config) << 32 | UInt64(schedule) << 16 | UInt64(stream.count) | 1)
    var chunks: [ArraySlice<UInt8>] = []
    var i = stream.startIndex
    while i < stream.endIndex {
        let end = min(stream.endIndex, i + chunker.next())
        chunks.append(stream[i..<end])
        i = end
    }
    let whole = decodeAll([stream])
    let split = decodeAll(chunks)
    guard whole.frames == split.frames, whole.buffered == split.buffered else { fatalError("chunking changed the decoded frames") }
    guard whole.buffered <= stream.count else { fatalError("decoder holds more bytes than it was fed") }
    for case .command(let code, let data) in whole.frames {
        guard data.count + 2 <= PN532Wire.maxBodyLength else { fatalError("command of \(data.count + 2) bytes accepted") }
        var again = PN532FrameDecoder()
        again.feed(PN532Wire.command(code, data))
        guard again.next() == .command(code: code, data: data), again.next() == nil else { fatalError("command does not re-frame") }
    }

    // The chip, driven like VirtualReader.run: a new command or a host ACK cancels a waiting one.
    let field = VirtualField(onChange: {})
    let card = try! VirtualCard(responder: FuzzCard(), uid: config & 0x08 != 0 ? [0x08, 0x11, 0x22, 0x33] : VirtualCard.defaultUID)
    if config & 0x01 != 0 { field.place(card) }
    if config & 0x02 != 0 {
        let reader = ExternalReader(timeout: 0, onCommand: {})
        if config & 0x04 != 0 { reader.leave() }
        field.setExternalReader(reader)
    }
    let chip = PN532Chip(field: field, wake: {}, log: { _ in }, onSession: { _ in }, onRawFrame: { _ in })
    let leaveAt = Int(schedule & 0x0F), returnAfter = Int(schedule >> 4)
    var pending: (code: UInt8, pending: PN532Chip.Pending)?
    for (n, frame) in whole.frames.enumerated() {
        if leaveAt > 0 && n == leaveAt { field.place(nil) }
        if leaveAt > 0 && returnAfter > 0 && n == leaveAt + returnAfter { field.place(card) }
        switch frame {
        case .ack:
            if let p = pending { chip.cancel(p.pending); pending = nil }
        case .command(let code, let data):
            if let p = pending { chip.cancel(p.pending); pending = nil }
            let outcome = chip.handle(code: code, data: data)
            if let reply = outcome.frame(answering: code) {
                checkReply(reply, code: code, data: data)
            } else if case .pending(let p) = outcome {
                pending = (code, p)
            }
        case .nack, .errorFrame, .malformed:
            break
        }
        // Let the card answer, let every deadline pass, and take whatever the chip says then.
        if let p = pending {
            field.cardQueue.sync {}
            if let outcome = chip.resume(p.pending, now: .distantFuture) {
                pending = nil
                guard let reply = outcome.frame(answering: p.code) else { fatalError("resume returned pending") }
                checkReply(reply, code: p.code, data: [])
            }
        }
    }
    if let p = pending { chip.cancel(p.pending) }
    field.cardQueue.sync {}
    return 0
}
