import CLibNFC

/// The single boundary to libnfc: every `nfc_*` call of the project lives in this file.
public enum LibNFC {
    /// The libnfc version loaded at run time (`nfc_version()`), e.g. "1.8.0".
    public static var version: String { String(cString: nfc_version()) }
}
