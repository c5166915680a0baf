// swift-tools-version: 6.1
// LockBench: one target per layer; data flows radio → transport → protocol → engine → lock.
// Pure layers (ByteCore, Codecs, Certification, AccessProtocol, OfflineUnlock, Lock) import no C
// module and do no radio I/O; only NFC imports CLibNFC, only PCSC imports CPCSCLite, only BLE
// imports CBlueZ. Every radio is a `CardReader` (ReaderSeam) that one `ReaderLoop` drives.
import PackageDescription

let crypto: Target.Dependency = .product(name: "Crypto", package: "swift-crypto")
let cryptoExtras: Target.Dependency = .product(name: "_CryptoExtras", package: "swift-crypto")
let argumentParser: Target.Dependency = .product(name: "ArgumentParser", package: "swift-argument-parser")

let package = Package(
    name: "LockBench",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "lockbench", targets: ["lockbench"]),
        .executable(name: "lockbench-bench", targets: ["lockbench-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
    ],
    targets: [
        // Foundation: bytes, hex, incremental framing, the APDU seam between radios and protocol.
        .target(name: "ByteCore"),
        // Wire codecs: CBOR, COSE, BER-TLV, ISO 7816-4 APDUs.
        .target(name: "Codecs", dependencies: ["ByteCore", crypto, cryptoExtras]),
        // Firmware certification tables, version ordering, verdicts, audits. The shipped tables
        // are firmware-tables/*.csv, compiled in at build time by the EmbedFirmwareTables plugin.
        .target(name: "Certification", dependencies: ["ByteCore"], plugins: ["EmbedFirmwareTables"]),
        .executableTarget(name: "embed-firmware-tables", path: "Sources/embed-firmware-tables"),
        .plugin(name: "EmbedFirmwareTables", capability: .buildTool(), dependencies: ["embed-firmware-tables"]),
        // Documents, trust, policy, and the grant/deny decision.
        .target(name: "OfflineUnlock", dependencies: ["ByteCore", "Codecs", crypto]),
        // APDU state machines (reader and credential side), key schedule, secure channel.
        .target(name: "AccessProtocol", dependencies: ["ByteCore", "Codecs", "OfflineUnlock", crypto]),
        // Conformance checks against phones and readers LockBench did not build, transcripts, trace.
        .target(name: "Conformance", dependencies: ["ByteCore", "Codecs", "AccessProtocol", crypto]),
        // The lock: state, trusted clock, persisted state, audit log.
        .target(name: "Lock", dependencies: ["ByteCore", "OfflineUnlock", "AccessProtocol", "Certification", crypto]),
        // System libraries.
        .systemLibrary(name: "CLibNFC", pkgConfig: "libnfc", providers: [.apt(["libnfc-dev"])]),
        .systemLibrary(name: "CBlueZ", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
        .systemLibrary(name: "CPCSCLite", pkgConfig: "libpcsclite", providers: [.apt(["libpcsclite-dev"])]),
        // The reader seam: `CardReader` (wait for a card or phone, exchange APDUs, learn it left)
        // and the one reader loop every radio runs under.
        .target(name: "ReaderSeam", dependencies: ["ByteCore"]),
        // Radios, each a CardReader.
        .target(name: "NFC", dependencies: ["ByteCore", "ReaderSeam", "CLibNFC"]),
        .target(name: "VirtualPN532", dependencies: ["ByteCore"]),
        .target(name: "PCSC", dependencies: ["ByteCore", "ReaderSeam", "SocketTransport", "CPCSCLite"]),
        .target(name: "BLE", dependencies: ["ByteCore", "ReaderSeam", "CBlueZ"]),
        // APDUs over TCP (one APDU per write, or length-framed): the lock's and the credential's ends.
        .target(name: "SocketTransport", dependencies: ["ByteCore", "ReaderSeam"]),
        // The one place that wires layers together: config → lock + radios.
        .target(name: "LockRuntime", dependencies: [
            "ByteCore", "Codecs", "Certification", "OfflineUnlock", "AccessProtocol", "Lock",
            "ReaderSeam", "NFC", "VirtualPN532", "PCSC", "BLE", "SocketTransport", "Conformance",
        ]),
        .executableTarget(name: "lockbench", dependencies: [
            "LockRuntime", "Certification", "ReaderSeam", "NFC", "PCSC", "BLE", "SocketTransport", "Conformance", argumentParser,
        ]),
        .executableTarget(name: "lockbench-bench", dependencies: [
            "LockRuntime", "Certification", "AccessProtocol", "OfflineUnlock", "Codecs", "ReaderSeam", "PCSC", "VirtualPN532", "LockBenchTestDoubles", crypto, argumentParser,
        ]),

        // What the tests share: paths, the lockbench process runner, the fuzz runner and the
        // virtual-controller launcher (XCTest), and, re-exported, the test doubles and fixtures
        // (the in-memory link, fixed keys and documents; no XCTest, so the benchmark links them
        // too). Test doubles live here, not in the production modules.
        .target(name: "LockBenchTestDoubles", dependencies: [
            "ByteCore", "Codecs", "OfflineUnlock", crypto,
        ], path: "Tests/LockBenchTestDoubles"),
        .target(name: "LockBenchTestSupport", dependencies: [
            "LockBenchTestDoubles", "ByteCore", "BLE", "PCSC",
        ], path: "Tests/LockBenchTestSupport"),

        .testTarget(name: "ByteCoreTests", dependencies: ["ByteCore"]),
        .testTarget(name: "CodecsTests", dependencies: ["Codecs", "ByteCore", "LockBenchTestSupport", crypto]),
        .testTarget(name: "CertificationTests", dependencies: ["Certification", "LockBenchTestSupport"]),
        .testTarget(name: "OfflineUnlockTests", dependencies: ["OfflineUnlock", "Codecs", "ByteCore", "LockBenchTestSupport", crypto]),
        .testTarget(name: "AccessProtocolTests", dependencies: ["AccessProtocol", "SocketTransport", "OfflineUnlock", "Codecs", "ByteCore", "LockBenchTestSupport", crypto]),
        .testTarget(name: "ConformanceTests", dependencies: ["Conformance", "AccessProtocol", "Codecs", "ByteCore", "LockBenchTestSupport", crypto]),
        // AuditCrashTests kills a `lockbench audit burst` child mid-append: it runs the binary.
        .testTarget(name: "LockTests", dependencies: ["Lock", "AccessProtocol", "OfflineUnlock", "ByteCore", "LockBenchTestSupport", "lockbench"]),
        .testTarget(name: "NFCTests", dependencies: ["NFC", "ReaderSeam", "VirtualPN532", "ByteCore", "LockBenchTestSupport"]),
        .testTarget(name: "BLETests", dependencies: ["BLE", "ReaderSeam", "ByteCore", "LockBenchTestSupport"]),
        .testTarget(name: "LockRuntimeTests", dependencies: ["LockRuntime", "ReaderSeam", "PCSC", "SocketTransport", "AccessProtocol", "OfflineUnlock", "Lock", "NFC", "VirtualPN532", "ByteCore", "Codecs", "LockBenchTestSupport", crypto]),
        // Whole-program tests: run the built `lockbench` binary as a user would.
        .testTarget(name: "EndToEndTests", dependencies: ["lockbench", "lockbench-bench", "LockRuntime", "LockBenchTestSupport"]),
    ],
    swiftLanguageModes: [.v5]
)
