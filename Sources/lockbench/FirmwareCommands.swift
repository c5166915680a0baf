import ArgumentParser

/// `lockbench firmware …` (owned by the certification layer).
let firmwareCommands: [ParsableCommand.Type] = []
