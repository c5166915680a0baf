import ByteCore
import XCTest

final class ByteWriterTests: XCTestCase {
    func testBigAndLittleEndianWidths() {
        var w = ByteWriter()
        w.write(0xAA)
        w.writeUInt16BE(0x0102); w.writeUInt16LE(0x0102)
        w.writeUInt32BE(0x0304_0506); w.writeUInt32LE(0x0304_0506)
        w.writeUInt64BE(0x0708_090A_0B0C_0D0E); w.writeUInt64LE(0x0708_090A_0B0C_0D0E)
        w.write([0xFF, 0xEE])
        XCTAssertEqual(w.bytes, [0xAA, 0x01, 0x02, 0x02, 0x01, 0x03, 0x04, 0x05, 0x06, 0x06, 0x05, 0x04, 0x03,
                                 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0E, 0x0D, 0x0C, 0x0B, 0x0A, 0x09, 0x08, 0x07,
                                 0xFF, 0xEE])
        XCTAssertEqual(UInt16(0x9000).bigEndianBytes, [0x90, 0x00])
        XCTAssertEqual(UInt16(0xFFF2).littleEndianBytes, [0xF2, 0xFF])
        XCTAssertEqual(UInt32(1).bigEndianBytes, [0, 0, 0, 1])
        XCTAssertEqual(UInt8(7).bigEndianBytes, [7])
    }

    /// What the writer writes, the reader reads back, at every width and both orders.
    func testReaderReadsWhatTheWriterWrote() {
        for v in [UInt64(0), 1, 0x80, 0xFF00, 0xDEAD_BEEF, 0x0123_4567_89AB_CDEF, .max] {
            var w = ByteWriter()
            w.writeUInt16BE(UInt16(truncatingIfNeeded: v)); w.writeUInt16LE(UInt16(truncatingIfNeeded: v))
            w.writeUInt32BE(UInt32(truncatingIfNeeded: v)); w.writeUInt32LE(UInt32(truncatingIfNeeded: v))
            w.writeUInt64BE(v); w.writeUInt64LE(v)
            var r = ByteReader(w.bytes)
            XCTAssertEqual(r.readUInt16BE(), UInt16(truncatingIfNeeded: v))
            XCTAssertEqual(r.readUInt16LE(), UInt16(truncatingIfNeeded: v))
            XCTAssertEqual(r.readUInt32BE(), UInt32(truncatingIfNeeded: v))
            XCTAssertEqual(r.readUInt32LE(), UInt32(truncatingIfNeeded: v))
            XCTAssertEqual(r.readUInt64BE(), v)
            XCTAssertEqual(r.readUInt64LE(), v)
            XCTAssertTrue(r.isAtEnd)
            XCTAssertNil(r.readUInt16BE())
        }
        var short = ByteReader([1, 2, 3])
        XCTAssertNil(short.readUInt32LE())
        XCTAssertEqual(short.readArray(3), [1, 2, 3])
        XCTAssertNil(short.readArray(1))
    }
}

/// A length-prefixed frame (1 byte of length), the smallest `FrameDecoder`, to test the
/// protocol's `frames(after:)` and `FrameBuffer` on their own.
private struct LengthPrefixed: FrameDecoder {
    struct TooLong: Error {}
    var buffer = FrameBuffer()
    mutating func feed<S: Sequence>(_ bytes: S) where S.Element == UInt8 { buffer.append(bytes) }
    mutating func next() throws(TooLong) -> [UInt8]? {
        guard buffer.count >= 1 else { return nil }
        let n = Int(buffer[0])
        guard n <= 200 else { throw TooLong() }
        guard buffer.count >= 1 + n else { return nil }
        buffer.consume(1)
        return buffer.take(n)
    }
}

final class FrameDecoderTests: XCTestCase {
    func testFramesAtEverySplitAndNeedMoreBytesIsNil() throws {
        let frames: [[UInt8]] = [[], [1], Array(0..<200), [9, 9]]
        let stream = frames.flatMap { [UInt8($0.count)] + $0 }
        for size in [1, 2, 3, 7, 100, stream.count] {
            var d = LengthPrefixed()
            var out: [[UInt8]] = []
            for start in stride(from: 0, to: stream.count, by: size) {
                out += try d.frames(after: stream[start..<min(start + size, stream.count)])
            }
            XCTAssertEqual(out, frames, "batch \(size)")
            XCTAssertTrue(d.buffer.isEmpty)
        }
        var d = LengthPrefixed()
        XCTAssertEqual(try d.frames(after: [3, 1, 2]), [])
        XCTAssertEqual(d.buffer.count, 3)
        XCTAssertEqual(try d.frames(after: [3]), [[1, 2, 3]])
        XCTAssertThrowsError(try d.frames(after: [201]))
    }

    /// A long stream keeps the buffer bounded (the consumed prefix is dropped).
    func testLongStreamDoesNotGrowTheBuffer() throws {
        var d = LengthPrefixed()
        for i in 0..<20_000 {
            XCTAssertEqual(try d.frames(after: [2, UInt8(truncatingIfNeeded: i), 0]).count, 1)
        }
        XCTAssertEqual(d.buffer.count, 0)
        var b = FrameBuffer()
        var model: [UInt8] = []
        for i in 0..<10_000 {
            let more = [UInt8(truncatingIfNeeded: i), 1, 2]
            b.append(more); model += more
            b.consume(2); model.removeFirst(2)
        }
        XCTAssertEqual(b.count, 10_000)
        XCTAssertEqual(b.all, model)
        XCTAssertEqual(b.take(3), Array(model.prefix(3)))
    }
}
