// swift-tools-version: 6.1
// LockBench: one target per layer; data flows radio → transport → protocol → engine → lock.
// Pure layers (ByteCore, Codecs, Certification, AccessProtocol, OfflineUnlock, Lock) import no C
// module and do no radio I/O; only NFC imports CLibNFC, only BLE imports CBlueZ.
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
        // APDU state machines (reader and credential side), key schedule, secure channel, socket transport.
        .target(name: "AccessProtocol", dependencies: ["ByteCore", "Codecs", "OfflineUnlock", crypto]),
        // The lock: state, trusted clock, persisted state, audit log.
        .target(name: "Lock", dependencies: ["ByteCore", "OfflineUnlock", "AccessProtocol", "Certification", crypto]),
        // System libraries.
        .systemLibrary(name: "CLibNFC", pkgConfig: "libnfc", providers: [.apt(["libnfc-dev"])]),
        .systemLibrary(name: "CBlueZ", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
        // Radios.
        .target(name: "NFC", dependencies: ["ByteCore", "CLibNFC"]),
        .target(name: "VirtualPN532", dependencies: ["ByteCore"]),
        .target(name: "BLE", dependencies: ["ByteCore", "CBlueZ"]),
        // The one place that wires layers together: config → lock + radios.
        .target(name: "LockRuntime", dependencies: [
            "ByteCore", "Codecs", "Certification", "OfflineUnlock", "AccessProtocol", "Lock",
            "NFC", "VirtualPN532", "BLE",
        ]),
        .executableTarget(name: "lockbench", dependencies: [
            "LockRuntime", "Certification", "NFC", "BLE", argumentParser,
        ]),
        .executableTarget(name: "lockbench-bench", dependencies: [
            "LockRuntime", "Certification", "AccessProtocol", "OfflineUnlock", "Codecs", "LockBenchTestSupport", crypto,
        ]),

        // What the tests share: paths, the lockbench process runner, the fuzz runner, fixtures,
        // the in-memory link and the virtual-controller launcher. Test doubles live here, not in
        // the production modules.
        .target(name: "LockBenchTestSupport", dependencies: [
            "ByteCore", "Codecs", "OfflineUnlock", "BLE", crypto,
        ], path: "Tests/LockBenchTestSupport"),

        .testTarget(name: "ByteCoreTests", dependencies: ["ByteCore"]),
        .testTarget(name: "CodecsTests", dependencies: ["Codecs", "ByteCore", "LockBenchTestSupport", crypto]),
        .testTarget(name: "CertificationTests", dependencies: ["Certification", "LockBenchTestSupport"]),
        .testTarget(name: "OfflineUnlockTests", dependencies: ["OfflineUnlock", "Codecs", "ByteCore", "LockBenchTestSupport", crypto]),
        .testTarget(name: "AccessProtocolTests", dependencies: ["AccessProtocol", "OfflineUnlock", "Codecs", "ByteCore", "LockBenchTestSupport", crypto]),
        // AuditCrashTests kills a `lockbench audit burst` child mid-append: it runs the binary.
        .testTarget(name: "LockTests", dependencies: ["Lock", "AccessProtocol", "OfflineUnlock", "ByteCore", "LockBenchTestSupport", "lockbench"]),
        .testTarget(name: "NFCTests", dependencies: ["NFC", "VirtualPN532", "ByteCore", "LockBenchTestSupport"]),
        .testTarget(name: "BLETests", dependencies: ["BLE", "ByteCore", "LockBenchTestSupport"]),
        .testTarget(name: "LockRuntimeTests", dependencies: ["LockRuntime", "AccessProtocol", "OfflineUnlock", "Lock", "NFC", "VirtualPN532", "ByteCore", "Codecs", "LockBenchTestSupport", crypto]),
        // Whole-program tests: run the built `lockbench` binary as a user would.
        .testTarget(name: "EndToEndTests", dependencies: ["lockbench", "LockRuntime", "LockBenchTestSupport"]),
    ],
    swiftLanguageModes: [.v5]
)
