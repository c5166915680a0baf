import AccessProtocol
import ByteCore
import Codecs
import Crypto

/// The reader key material of the official reader-certificate cases (the tool plays the reader):
/// copied from the Aliro Certification Tool's `test_collections/aliro/support/aliro_test_case.py`
/// `default_test_parameters` (newest stored version, index id 61939174695, and the older one,
/// index id 61980388441) and from the negative case's file (see each constant). A phone is
/// provisioned for these cases as their operator prompt says: trust `issuerPublicKey` for
/// `groupID` (LockBench's phone: `--reader-issuer-ca 00113344667799AA00113344667799AA=FILE`).
/// Tests/Vectors/aliro-reader-certificates holds the same bytes with their provenance.
public enum OfficialReaderCertificates {
    /// `th_reader_group_identifier`.
    public static let groupID = Hex.decode("00113344667799AA00113344667799AA")!
    /// `th_reader_sub_group_identifier`.
    public static let subID = Hex.decode("113344667799AA00113344667799AA00")!
    /// `th_reader_issuer_public_key`: the reader issuer CA the phone trusts for `groupID`.
    public static let issuerPublicKey = Hex.decode("043928f322019d4757893bde6a0fe5e13e3e537b9ca0f549c0bd2f40f79060252a0a4f291192157a95cb6eb202759428c00cd834998c5d0eab192ee8873c5d34ee")!

    /// `th_reader_private_key` of the newest defaults: the key `chainingCertificate` names (it is
    /// the issuer key too: a self-issued certificate).
    public static let readerKey = try! P256.Signing.PrivateKey(rawRepresentation: Hex.decode("8aefdff8d5b47aa9a3edbac7a345ed2221021512fd55abde3b8ee0f208952693")!)
    /// `th_reader_private_key` of the older defaults (public `0457a25c…`): the key `certificate`
    /// and `incorrectSignatureCertificate` name.
    public static let olderReaderKey = try! P256.Signing.PrivateKey(rawRepresentation: Hex.decode("359449fb6b51ced37d8f516b175a9a210b1b1dcdbd15915e49296b5e802c2d40")!)

    /// `th_reader_certificate_chaining` (newest defaults): long names, 20-byte serial — the
    /// compressed form needs a command chain.
    public static let chainingCertificate = try! ReaderCertificate(parsingX509: Hex.decode(
        "3082019a3082013fa00302010202140104513ad4f33e92f21aa45b0001004b35602245300a06082a8648ce3d040302302b3129302706035504030c20616c69726f2d746573742d766572792d6c6f6e676e616d65642d697373756572301e170d3234303130313030303030305a170d3430303130313030303030305a302b3129302706035504030c20616c69726f2d746573742d73696d696c61726c796c6f6e672d6861726e6573733059301306072a8648ce3d020106082a8648ce3d030107034200043928f322019d4757893bde6a0fe5e13e3e537b9ca0f549c0bd2f40f79060252a0a4f291192157a95cb6eb202759428c00cd834998c5d0eab192ee8873c5d34eea341303f301f0603551d230418301680147fc93128a61c0cedf94e11732dbe46017c431901300c0603551d130101ff04023000300e0603551d0f0101ff040403020780300a06082a8648ce3d0403020349003046022100ea06af2b9b912feaff200291c0eabc9e85213d3beacee5a626f6c10a5fb49e4c022100db4d3ef630894871e8775fe351f31e94d5ca1b4754e134bcedca890afcced544")!)

    /// `th_reader_certificate` of the older defaults (subject `0457a25c…`, signed by
    /// `issuerPublicKey`; all defaults, so one APDU). The newest defaults' `th_reader_certificate`
    /// (authority key id `2318e556…`) does not verify under the newest `th_reader_issuer_public_key`
    /// (SHA-1 `7fc93128…`): a phone provisioned as the prompt says must refuse it, so the
    /// non-chaining cases as stored cannot pass with the defaults; LockBench sends this one.
    public static let certificate = try! ReaderCertificate(parsingX509: Hex.decode(
        "308201513081f9a003020102020101300a06082a8648ce3d0403023011310f300d06035504030c06697373756572301e170d3230303130313030303030305a170d3439303130313030303030305a30123110300e06035504030c077375626a6563743059301306072a8648ce3d020106082a8648ce3d0301070342000457a25ca8690e0409aa2a094a88f3894e136399efe35b7f25d2991c7ad206239867d99e3f243afd6cec35c21bdee6521af12435e8c4ff9296d1ca970e6ca77b50a341303f301f0603551d230418301680147fc93128a61c0cedf94e11732dbe46017c431901300c0603551d130101ff04023000300e0603551d0f0101ff040403020780300a06082a8648ce3d040302034700304402207c387cfebd826878541f2202316338446509b6a2225c748571137c9303fb685e02204678b2021fc6623a0796a630d4c2b840ed86e9bbea7043abcb4a766b881a457d")!)

    /// The certificate hard-coded in `nfc_ud_neg_standard_cert_in_load_cert_with_chaining_incorrect_signature.py`
    /// (@ 3d7533149f960b497f90d4f246186111edc8e01c): subject `0457a25c…`, authority key id
    /// `72382193…` — its signature does not verify under `issuerPublicKey`.
    public static let incorrectSignatureCertificate = try! ReaderCertificate(parsingX509: Hex.decode(
        "308201523081f9a003020102020101300a06082a8648ce3d0403023011310f300d06035504030c06697373756572301e170d3230303130313030303030305a170d3439303130313030303030305a30123110300e06035504030c077375626a6563743059301306072a8648ce3d0201" +
        "06082a8648ce3d0301070342000457a25ca8690e0409aa2a094a88f3894e136399efe35b7f25d2991c7ad206239867d99e3f243afd6cec35c21bdee6521af12435e8c4ff9296d1ca970e6ca77b50a341303f301f0603551d2304183016801472382193af308e03b04d8ea9bafd52e53f492624300c0603551d130101ff04023000300e0603551d0f0101ff040403020780300a06082a8648ce3d040302034800304502202d76e93595ea0676428b8d2844975c15d08c1c5608e048ed050923e7725d36ce0221008682d7de14388208bee2790dfc6e51bd4e365bc9d594b3b7420826e593c80096")!)

    /// The official corruption of NFC_UD_NEG_…_INCORRECT_FORMAT (and UD-NFC-AUTH1-1.1, 2.1, 3.1):
    /// the compressed certificate with bytes [5] and [6] set to `FF` (its profile `00 00`).
    public static func incorrectFormat(_ certificate: ReaderCertificate) -> [UInt8] {
        var bytes = certificate.compressed()
        bytes[5] = 0xFF
        bytes[6] = 0xFF
        return bytes
    }

    /// The reader of the cases: one of the two official keys, the official group, and `sub`.
    public static func identity(_ key: P256.Signing.PrivateKey, sub: [UInt8] = subID) -> ReaderSigningIdentity {
        ReaderSigningIdentity(signingKey: key, groupID: groupID, subID: sub)
    }

    /// What the operator prompt asks of the phone, for "not applicable" reasons and help texts.
    public static let prompt = "provision the phone as the certificate cases' operator prompt says — trust the reader issuer key "
        + "\(Hex.encode(Array(issuerPublicKey.prefix(8))))… for reader group \(Hex.encode(groupID)) — and pass --reader-certificates"
}
