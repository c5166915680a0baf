import Foundation
import PackagePlugin

/// Compiles `firmware-tables/*.csv` into the Certification module at build time, so `lockbench`
/// carries the shipped tables wherever it runs and the folder stays the one place they are
/// edited: a changed or added table is picked up by the next build.
@main
struct EmbedFirmwareTables: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let folder = context.package.directoryURL.appending(path: "firmware-tables")
        let tables = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".csv") }
            .sorted()
            .map { folder.appending(path: $0) }
        let output = context.pluginWorkDirectoryURL.appending(path: "BuiltInTables.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(tables.count) firmware table(s) from firmware-tables/",
                executable: try context.tool(named: "embed-firmware-tables").url,
                arguments: [output.path] + tables.map(\.path),
                inputFiles: tables,
                outputFiles: [output]
            ),
        ]
    }
}
