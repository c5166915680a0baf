import ArgumentParser

/// `lock transact` and friends, owned by the protocol layer's socket commands.
let lockTransactCommands: [ParsableCommand.Type] = [LockTransact.self]
