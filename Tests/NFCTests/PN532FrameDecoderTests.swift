import ByteCore
import XCTest
@testable import VirtualPN532

/// The incremental PN532 frame decoder, fed one byte at a time, in batches and shuffled
/// (swift-nio's ByteToMessageDecoderVerifier approach).
final class PN532FrameDecoderTests: XCTestCase {
    /// A session's opening bytes as libnfc writes them, with the expected decoded frames.
    private var stream: ([UInt8], [PN532HostFrame]) {
        var bytes: [UInt8] = PN532Wire.wakeUpPreamble
        var frames: [PN532HostFrame] = []
        bytes += PN532Wire.command(0x14, [0x01]); frames.append(.command(code: 0x14, data: [0x01]))
        bytes += PN532Wire.command(0x00, [0x00] + Array("libnfc".utf8)); frames.append(.command(code: 0x00, data: [0x00] + Array("libnfc".utf8)))
        bytes += PN532Wire.ack; frames.append(.ack)
        bytes += PN532Wire.nack; frames.append(.nack)
        let big = (0..<262).map { UInt8(truncatingIfNeeded: $0) }
        bytes += PN532Wire.command(0x40, [0x01] + big); frames.append(.command(code: 0x40, data: [0x01] + big))
        bytes += PN532Wire.command(0x02, [], forceExtended: true); frames.append(.command(code: 0x02, data: []))
        bytes += [0x00, 0x00, 0xFF, 0x03, 0xFD, 0xD4, 0x02, 0x00, 0x00]; frames.append(.malformed(.dataChecksum))
        bytes += [0x00, 0x00, 0xFF, 0x03, 0xFB, 0xD4]; frames.append(.malformed(.lengthChecksum))
        bytes += PN532Wire.frame(tfi: 0xD5, body: [0x03]); frames.append(.malformed(.unexpectedTFI))
        bytes += PN532Wire.errorFrame; frames.append(.errorFrame)
        bytes += [0x55, 0x55, 0x00, 0x00]
        bytes += PN532Wire.command(0x4A, [0x01, 0x00]); frames.append(.command(code: 0x4A, data: [0x01, 0x00]))
        return (bytes, frames)
    }

    private func decode(_ chunks: [[UInt8]]) -> [PN532HostFrame] {
        var decoder = PN532FrameDecoder()
        return chunks.flatMap { decoder.frames(after: $0) }
    }

    func testWholeStream() {
        let (bytes, frames) = stream
        XCTAssertEqual(decode([bytes]), frames)
    }

    func testOneByteAtATime() {
        let (bytes, frames) = stream
        XCTAssertEqual(decode(bytes.map { [$0] }), frames)
    }

    func testEveryBatchSize() {
        let (bytes, frames) = stream
        for size in [2, 3, 5, 7, 64, 255] {
            let chunks = stride(from: 0, to: bytes.count, by: size).map { Array(bytes[$0..<min($0 + size, bytes.count)]) }
            XCTAssertEqual(decode(chunks), frames, "batch size \(size)")
        }
    }

    func testRandomSplits() {
        let (bytes, frames) = stream
        var rng = SplitMix64(seed: 42)
        for _ in 0..<200 {
            var chunks: [[UInt8]] = []
            var i = 0
            while i < bytes.count {
                let n = Int(rng.next() % 40) + 1
                chunks.append(Array(bytes[i..<min(i + n, bytes.count)]))
                i += n
            }
            XCTAssertEqual(decode(chunks), frames)
        }
    }

    /// Shuffling whole frames: each frame decodes on its own whatever its neighbours.
    func testShuffledFrames() {
        var rng = SplitMix64(seed: 7)
        let commands: [(UInt8, [UInt8])] = (0..<40).map { i in (UInt8(i * 2), (0..<(i * 6)).map { UInt8(truncatingIfNeeded: $0 ^ i) }) }
        for _ in 0..<20 {
            var order = Array(commands.indices)
            for i in stride(from: order.count - 1, to: 0, by: -1) { order.swapAt(i, Int(rng.next() % UInt64(i + 1))) }
            let bytes = order.flatMap { PN532Wire.command(commands[$0].0, commands[$0].1) }
            XCTAssertEqual(decode(bytes.map { [$0] }), order.map { .command(code: commands[$0].0, data: commands[$0].1) })
        }
    }

    func testNeedsMoreBytesReturnsNil() {
        var decoder = PN532FrameDecoder()
        let frame = PN532Wire.command(0x02)
        decoder.feed(frame.dropLast(2))
        XCTAssertNil(decoder.next())
        decoder.feed(frame.suffix(2))
        XCTAssertEqual(decoder.next(), .command(code: 0x02, data: []))
        XCTAssertNil(decoder.next())
    }

    func testReplyEncodingNormalAndExtended() {
        XCTAssertEqual(PN532Wire.reply(to: 0x02, [0x32, 0x01, 0x06, 0x07]),
                       [0x00, 0x00, 0xFF, 0x06, 0xFA, 0xD5, 0x03, 0x32, 0x01, 0x06, 0x07, 0xE8, 0x00])
        let big = PN532Wire.reply(to: 0x40, [0x00] + [UInt8](repeating: 0xAB, count: 262))
        XCTAssertEqual(Array(big.prefix(8)), [0x00, 0x00, 0xFF, 0xFF, 0xFF, 0x01, 0x09, 0xF6])
        XCTAssertEqual(big.count, 8 + 265 + 2)
        XCTAssertEqual(big.dropFirst(8).dropLast(1).reduce(0 as UInt8, &+), 0)
    }
}

