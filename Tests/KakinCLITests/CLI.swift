import Foundation
import KakinCLI
import Testing

/// Runs `kakin` with arguments in-process and returns what it would print.
func kakin(_ arguments: String...) async throws -> CommandOutput {
    try await kakin(arguments)
}

/// Runs `kakin` with a list of arguments in-process and returns what it would print.
func kakin(_ arguments: [String]) async throws -> CommandOutput {
    let command = try KakinCommand.parseAsRoot(arguments)
    let producing = try #require(
        command as? any OutputProducingCommand, "\(arguments) is not an output-producing command")
    return await producing.produceOutput()
}

/// A scratch directory removed at the end of the test.
struct ScratchDirectory: ~Copyable {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    func write(_ text: String, to name: String) throws -> String {
        try Data(text.utf8).write(to: url.appendingPathComponent(name))
        return path(name)
    }
}
