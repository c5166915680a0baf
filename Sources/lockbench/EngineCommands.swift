import ArgumentParser

/// Keys, documents, lock configuration, audit log, clock (owned by the engine layer); the protocol
/// layer appends its socket commands.
var engineCommands: [ParsableCommand.Type] = [
    KeyCommand.self, DocCommand.self, ConfigCommand.self, DecideCommand.self, ClockCommand.self, AuditCommand.self, CredentialCommand.self,
]
