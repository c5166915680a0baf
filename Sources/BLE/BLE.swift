import CBlueZ

/// BLE host over HCI (placeholder until the BLE layer lands).
public enum BLE {
    /// HCI_CHANNEL_USER from BlueZ's headers: the channel a user-space host binds to.
    public static let userChannel = Int32(HCI_CHANNEL_USER)
}
