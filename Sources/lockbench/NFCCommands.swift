import ArgumentParser

/// `lockbench nfc …`, `lock run`, `demo`, `doctor` (owned by the NFC layer).
let nfcCommands: [ParsableCommand.Type] = []
