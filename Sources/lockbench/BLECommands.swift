import ArgumentParser

/// `lockbench ble …` (owned by the BLE layer).
let bleCommands: [ParsableCommand.Type] = []
