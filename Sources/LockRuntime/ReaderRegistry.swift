import NFC
import PCSC

extension LockRunner {
    /// The registry of `--nfc` schemes: what a spec names and which `CardReader` serves it.
    /// A new reader kind is one case here, its parse, and its reader in `reader(for:)`.
    public enum NFCSource: Equatable, Sendable {
        /// Any libnfc connstring (`acr122_usb`, `pn532_uart:/dev/ttyUSB0`).
        case connstring(String)
        /// A virtual PN532 this process serves on a pty (at `link` when given), opened through libnfc.
        case virtual(link: String?)
        /// A PC/SC reader through pcscd: the first one, or the one named.
        case pcsc(reader: String?)

        /// The forms `init(_:)` takes, for `--help` (the commands name no scheme themselves).
        public static let forms = "a libnfc connstring, `virtual` or `virtual:LINKPATH`, `pcsc` or `pcsc:READER NAME`"

        /// `virtual`, `virtual:/tmp/lockbench-reader`, `pcsc`, `pcsc:READER NAME`, or a libnfc connstring.
        public init(_ text: String) {
            if text == "virtual" { self = .virtual(link: nil) }
            else if text.hasPrefix("virtual:") { self = .virtual(link: String(text.dropFirst("virtual:".count))) }
            else if text == "pcsc" { self = .pcsc(reader: nil) }
            else if text.hasPrefix("pcsc:") {
                let name = String(text.dropFirst("pcsc:".count))
                self = .pcsc(reader: name.isEmpty ? nil : name)
            }
            else { self = .connstring(text) }
        }
    }

    /// Starts the reader loop for `source` (`connstring` is the virtual PN532's when one was started).
    func startNFC(_ source: NFCSource, connstring virtualConnstring: String?) {
        switch source {
        case .connstring(let c):
            run(LibNFCReader(connstring: c, ecpPolling: service.walletPolling), radio: .nfc)
        case .virtual:
            run(LibNFCReader(connstring: virtualConnstring ?? "", ecpPolling: service.walletPolling), radio: .nfc)
        case .pcsc(let name):
            run(PCSCReader(readerName: name), radio: .nfc)
        }
    }
}
