import ArgumentParser

/// Keys, documents, the socket transport (owned by the engine layer).
let engineCommands: [ParsableCommand.Type] = []
