// swift-tools-version: 6.2
// LockBench: one target per layer; data flows radio → transport → protocol → engine → lock.
// Pure layers (ByteCore, Codecs, Certification, AccessProtocol, OfflineUnlock, Lock) import no C
// module and do no radio I/O; only NFC imports CLibNFC, only PCSC imports CPCSCLite, only BLE
// imports CBlueZ. Every radio is a `CardReader` (ReaderSeam) that one `ReaderLoop` drives; on the
// phone's side, its twin: every radio is a `PhoneRadio` (PhoneSeam) named by one `PhoneRadioSpec`.
import PackageDescription

let crypto: Target.Dependency = .product(name: "Crypto", package: "swift-crypto")
let cryptoExtras: Target.Dependency = .product(name: "_CryptoExtras", package: "swift-crypto")
let argumentParser: Target.Dependency = .product(name: "ArgumentParser", package: "swift-argument-parser")
// --- Trust (keys that stay current): the server stack, kept together so merges stay clean. ---
let hummingbird: Target.Dependency = .product(name: "Hummingbird", package: "hummingbird")
let hummingbirdTesting: Target.Dependency = .product(name: "HummingbirdTesting", package: "hummingbird")
let hummingbirdTLS: Target.Dependency = .product(name: "HummingbirdTLS", package: "hummingbird")
let hummingbirdCore: Target.Dependency = .product(name: "HummingbirdCore", package: "hummingbird")
let nioSSL: Target.Dependency = .product(name: "NIOSSL", package: "swift-nio-ssl")
let sqliteNIO: Target.Dependency = .product(name: "SQLiteNIO", package: "sqlite-nio")
let postgresNIO: Target.Dependency = .product(name: "PostgresNIO", package: "postgres-nio")
let nioPosix: Target.Dependency = .product(name: "NIOPosix", package: "swift-nio")
let nioCore: Target.Dependency = .product(name: "NIOCore", package: "swift-nio")
let nioHTTP1: Target.Dependency = .product(name: "NIOHTTP1", package: "swift-nio")
let jwtKit: Target.Dependency = .product(name: "JWTKit", package: "jwt-kit")
let serviceLifecycle: Target.Dependency = .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
let logging: Target.Dependency = .product(name: "Logging", package: "swift-log")
let metrics: Target.Dependency = .product(name: "Metrics", package: "swift-metrics")
let prometheus: Target.Dependency = .product(name: "Prometheus", package: "swift-prometheus")
let asyncHTTPClient: Target.Dependency = .product(name: "AsyncHTTPClient", package: "async-http-client")
// --- end Trust ---

let package = Package(
    name: "LockBench",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "lockbench", targets: ["lockbench"]),
        .executable(name: "lockbench-server", targets: ["lockbench-server"]),
        .executable(name: "lockbench-bench", targets: ["lockbench-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        // --- Trust ---
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/vapor/sqlite-nio", from: "1.13.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.36.0"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // --- end Trust ---
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
        .target(name: "Conformance", dependencies: ["ByteCore", "Codecs", "OfflineUnlock", "AccessProtocol", "ReaderSeam", "PhoneSeam", crypto]),
        // The lock: state, trusted clock, persisted state, audit log.
        .target(name: "Lock", dependencies: ["ByteCore", "Codecs", "OfflineUnlock", "AccessProtocol", crypto]),
        // System libraries.
        .systemLibrary(name: "CLibNFC", pkgConfig: "libnfc", providers: [.apt(["libnfc-dev"])]),
        .systemLibrary(name: "CBlueZ", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
        .systemLibrary(name: "CPCSCLite", pkgConfig: "libpcsclite", providers: [.apt(["libpcsclite-dev"])]),
        // The reader seam: `CardReader` (wait for a card or phone, exchange APDUs, learn it left)
        // and the one reader loop every radio runs under.
        .target(name: "ReaderSeam", dependencies: ["ByteCore"]),
        // The phone seam, its twin: `PhoneRadio` (put a phone where a lock can reach it for one
        // transaction). Each radio's phone side and the one registry that names them are in PhoneRadios.
        .target(name: "PhoneSeam", dependencies: ["ByteCore", "AccessProtocol"]),
        .target(name: "PhoneRadios", dependencies: ["PhoneSeam", "ByteCore", "SocketTransport", "VirtualPN532", "PCSC", "BLE"]),
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
            "ReaderSeam", "NFC", "VirtualPN532", "PCSC", "BLE", "SocketTransport", crypto,
        ]),
        // Conformance over BLE (LockBench the lock or the phone, frame by frame): the BLE catalogues.
        .target(name: "ConformanceRadios", dependencies: [
            "Conformance", "PhoneRadios", "BLE", "AccessProtocol", "ByteCore", "Codecs", "OfflineUnlock", crypto,
        ]),
        // --- Trust: the service that keeps short-lived keys current, in layers: the model (records,
        // changes, errors, the storage seam), the service core (documents, tokens, approvals), one
        // module per storage backend, where backends are chosen, and the HTTP API. ---
        .target(name: "TrustModel", dependencies: ["ByteCore", "Codecs", "OfflineUnlock"]),
        .target(name: "TrustCore", dependencies: ["TrustModel", "ByteCore", "Codecs", "OfflineUnlock", "Lock", crypto, jwtKit]),
        // sqlite-nio's C module (its `sqlite3_*` for the direct reader) is not a product of that package.
        .target(name: "TrustSQLite", dependencies: ["TrustModel", "ByteCore", sqliteNIO, nioCore, nioPosix, logging]),
        .target(name: "TrustPostgres", dependencies: ["TrustModel", postgresNIO, nioCore, nioPosix, logging]),
        .target(name: "TrustBackends", dependencies: ["TrustModel", "TrustCore", "TrustSQLite", "TrustPostgres"]),
        // A Hummingbird router served in the background: the trust API and the push relay.
        .target(name: "HTTPServing", dependencies: [hummingbird, hummingbirdCore, hummingbirdTLS, nioSSL, serviceLifecycle, logging, nioCore]),
        .target(name: "TrustHTTP", dependencies: ["TrustModel", "TrustCore", "HTTPServing", "ByteCore", "Codecs", hummingbird, logging, metrics, prometheus, nioCore, asyncHTTPClient, crypto]),
        // The push relay (APNs- and FCM-shaped) and mobile wake-up subscriptions: no storage
        // backend, no token signing.
        .target(name: "Push", dependencies: ["ByteCore", "Codecs", "TrustModel", "HTTPServing", crypto, hummingbird, nioCore, logging, metrics, asyncHTTPClient]),
        .target(name: "TrustPhone", dependencies: ["Push",
            "ByteCore", "Codecs", "OfflineUnlock", "AccessProtocol", "TrustModel", crypto,
            asyncHTTPClient, nioCore, nioHTTP1,
        ]),
        .target(name: "Scenario", dependencies: ["Push",
            "ByteCore", "Codecs", "OfflineUnlock", "AccessProtocol", "Lock", "LockRuntime", "TrustModel", "TrustCore", "TrustBackends", "TrustHTTP", "TrustPhone", crypto,
            "BLE", "SocketTransport", "PhoneSeam", "PhoneRadios",
        ]),
        // --- end Trust ---
        // What both command-line products share: running a command with LockBench's exit codes.
        .target(name: "CommandLineSupport", dependencies: ["LockRuntime", argumentParser]),
        .executableTarget(name: "lockbench", dependencies: [
            "CommandLineSupport",
            "LockRuntime", "Certification", "ReaderSeam", "NFC", "PCSC", "BLE", "SocketTransport", "Conformance", "ConformanceRadios", "PhoneSeam", "PhoneRadios", argumentParser,
            "ByteCore", "Codecs", "AccessProtocol", "OfflineUnlock", "Lock", "VirtualPN532", crypto,
        ]),
        // The server side (`lockbench trust|phone|scenario|push|fleet` runs it): the HTTP and
        // database stack stays out of the lock binary.
        // The bench console: a running lock's events (its Unix socket) served to a browser.
        .target(name: "BenchConsole", dependencies: ["ByteCore", "HTTPServing", hummingbird, logging, nioCore]),
        .executableTarget(name: "lockbench-server", dependencies: [
            "CommandLineSupport", "BenchConsole",
            "LockRuntime", "ByteCore", "Codecs", "OfflineUnlock", "AccessProtocol", argumentParser,
            "BLE", "NFC", "SocketTransport", "VirtualPN532", "PhoneSeam", "PhoneRadios",
            "TrustModel", "TrustCore", "TrustBackends", "TrustHTTP", "HTTPServing", "TrustPhone", "Scenario", "Push", serviceLifecycle, logging, metrics, prometheus, nioHTTP1, crypto,
        ]),
        .executableTarget(name: "lockbench-bench", dependencies: [
            "LockRuntime", "Certification", "AccessProtocol", "OfflineUnlock", "Codecs", "ReaderSeam", "PCSC", "VirtualPN532", "LockBenchTestDoubles", crypto, argumentParser,
            "ByteCore", "Lock", "NFC", "BLE",
            "TrustModel", "TrustCore", "TrustSQLite", "TrustPostgres", "TrustHTTP", "TrustPhone", "Scenario", "Push", asyncHTTPClient, nioCore, // Trust
        ]),

        // What the tests share: paths, the lockbench process runner, the fuzz runner and the
        // virtual-controller launcher (XCTest), and, re-exported, the test doubles and fixtures
        // (the in-memory link, fixed keys and documents; no XCTest, so the benchmark links them
        // too). Test doubles live here, not in the production modules.
        .target(name: "LockBenchTestDoubles", dependencies: [
            "ByteCore", "Codecs", "OfflineUnlock", crypto,
        ], path: "Tests/LockBenchTestDoubles"),
        .target(name: "LockBenchTestSupport", dependencies: [
            "LockBenchTestDoubles", "BLE", "PCSC",
        ], path: "Tests/LockBenchTestSupport"),

        .testTarget(name: "ByteCoreTests", dependencies: ["ByteCore"]),
        .testTarget(name: "CodecsTests", dependencies: ["Codecs", "ByteCore", "LockBenchTestSupport", crypto]),
        .testTarget(name: "CertificationTests", dependencies: ["Certification", "LockBenchTestSupport"]),
        .testTarget(name: "OfflineUnlockTests", dependencies: ["OfflineUnlock", "Codecs", "ByteCore", "LockBenchTestSupport", crypto]),
        .testTarget(name: "AccessProtocolTests", dependencies: ["AccessProtocol", "SocketTransport", "OfflineUnlock", "Codecs", "ByteCore", "LockBenchTestSupport", "LockBenchTestDoubles", crypto]),
        .testTarget(name: "ConformanceTests", dependencies: ["Conformance", "AccessProtocol", "OfflineUnlock", "Codecs", "ByteCore", "LockBenchTestSupport", crypto]),
        // AuditCrashTests kills a `lockbench-bench audit-burst` child mid-append: it runs the binary.
        .testTarget(name: "LockTests", dependencies: ["Lock", "AccessProtocol", "OfflineUnlock", "ByteCore", "Codecs", "LockBenchTestSupport", crypto, "lockbench", "lockbench-bench"]),
        .testTarget(name: "NFCTests", dependencies: ["NFC", "ReaderSeam", "VirtualPN532", "ByteCore", "LockBenchTestSupport"]),
        .testTarget(name: "BLETests", dependencies: ["BLE", "ReaderSeam", "ByteCore", "LockBenchTestSupport",
                                                     "AccessProtocol", "OfflineUnlock", "Lock", "LockRuntime", "Codecs", crypto], exclude: ["python"]),
        .testTarget(name: "LockRuntimeTests", dependencies: ["LockRuntime", "Conformance", "ConformanceRadios", "PhoneSeam", "PhoneRadios", "NFC", "ReaderSeam", "PCSC", "SocketTransport", "AccessProtocol", "OfflineUnlock", "Lock", "VirtualPN532", "ByteCore", "Codecs", "LockBenchTestSupport", crypto]),
        // --- Trust ---
        .testTarget(name: "TrustTests", dependencies: [
            "lockbench", "lockbench-server", "TrustModel", "TrustCore", "TrustSQLite", "TrustPostgres", "TrustBackends", "TrustHTTP", "TrustPhone", "Scenario", "Push", "OfflineUnlock", "Lock", "LockRuntime", "ByteCore", "Codecs", "LockBenchTestSupport", crypto,
            hummingbird, hummingbirdTesting, jwtKit, sqliteNIO, asyncHTTPClient, logging, metrics, prometheus, nioCore, nioHTTP1, nioSSL, "HTTPServing",
        ], exclude: ["python"]),
        // --- end Trust ---
        // Whole-program tests: run the built `lockbench` binary (and its server side) as a user would.
        .testTarget(name: "EndToEndTests", dependencies: ["lockbench", "lockbench-server", "lockbench-bench", "BLE", "ByteCore", "Codecs", "LockBenchTestSupport"], exclude: ["python"]),
    ],
    // Swift 6 language mode everywhere: the compiler checks the concurrency (strict, complete).
    swiftLanguageModes: [.v6]
)
