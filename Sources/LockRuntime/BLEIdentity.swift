import BLE
import ByteCore
import Codecs

/// How a lock's BLE identity follows from its reader identity (docs/ble.md), so that every lock
/// on a link has its own address and two locks of one group advertise tags a phone can resolve.
/// The public facts fix neither derivation; these are LockBench's, written down so that an
/// independent phone can reproduce them.
public enum BLEIdentity {
    /// The static random address: SHA-256(group id ‖ sub id)[0:6], most significant byte first,
    /// top two bits set to `11` (and the lowest bit flipped if the 46 random bits came out all
    /// zeros or all ones).
    public static func address(groupID: [UInt8], subID: [UInt8]) -> BLEAddress {
        BLEAddress.staticRandom(digest: Array(Primitives.sha256(groupID + subID).prefix(6)))
    }

    /// The info string of the group resolving key's HKDF.
    public static let groupResolvingKeyInfo = Array("LockBench group resolving key".utf8)

    /// The group resolving key when the configuration gives none: HKDF-SHA256(ikm = group id,
    /// salt = empty, info = "LockBench group resolving key", 16 bytes). Anyone who knows the
    /// group id can compute it — a bench default, not a secret; a real deployment's key goes in
    /// the lock configuration (`ble.groupResolvingKey`).
    public static func groupResolvingKey(groupID: [UInt8]) -> [UInt8] {
        (try? Primitives.hkdf(ikm: groupID, salt: [], info: groupResolvingKeyInfo, length: 16)) ?? []
    }

    /// AES-128-ECB of the tag block under the group resolving key (ALIRO-FACTS BLE).
    public static func tag(key: [UInt8], block: [UInt8]) -> [UInt8] {
        (try? Primitives.aes128Block(key: key, block: block)) ?? []
    }
}
