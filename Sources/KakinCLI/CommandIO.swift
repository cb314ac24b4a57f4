import Foundation

/// What a command produced: text for standard output and standard error, and an exit status.
///
/// Commands compute this instead of printing directly, so tests can run them in-process and read
/// exactly what a user would see.
public struct CommandOutput: Sendable, Equatable {
    public var standardOutput: String
    public var standardError: String
    public var exitCode: Int32

    public init(standardOutput: String = "", standardError: String = "", exitCode: Int32 = 0) {
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.exitCode = exitCode
    }

    /// A failure: one line on standard error, exit status 1.
    static func failure(_ line: String) -> CommandOutput {
        CommandOutput(standardError: line, exitCode: 1)
    }
}

/// A command whose work is a function from its parsed arguments to a ``CommandOutput``.
public protocol OutputProducingCommand {
    func produceOutput() async -> CommandOutput
}

extension OutputProducingCommand {
    /// Prints the output and exits with its status. Never shows a stack trace.
    func emit() async throws {
        let output = await produceOutput()
        if !output.standardOutput.isEmpty {
            FileHandle.standardOutput.write(Data((output.standardOutput + "\n").utf8))
        }
        if !output.standardError.isEmpty {
            FileHandle.standardError.write(Data((output.standardError + "\n").utf8))
        }
        if output.exitCode != 0 {
            throw ExitCodeError(code: output.exitCode)
        }
    }
}

struct ExitCodeError: Error {
    let code: Int32
}

/// Reads a command's input file, or standard input for `-`.
enum InputFile {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func read(_ path: String) throws(Failure) -> Data {
        if path == "-" {
            return FileHandle.standardInput.readDataToEndOfFile()
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw Failure(description: "\(path): no such file")
        }
        guard !isDirectory.boolValue, let data = FileManager.default.contents(atPath: path) else {
            throw Failure(description: "\(path): not a readable file")
        }
        return data
    }

    static func readText(_ path: String) throws(Failure) -> String {
        let data = try read(path)
        guard let text = String(data: data, encoding: .utf8) else {
            throw Failure(description: "\(path): not UTF-8 text")
        }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// JSON formatting shared by the commands: pretty, with sorted keys and unescaped slashes.
enum PrettyJSON {
    static func string(fromJSON data: Data) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else {
            return nil
        }
        return string(from: object)
    }

    static func string(from object: Any) -> String? {
        guard
            let data = try? JSONSerialization.data(
                withJSONObject: object,
                options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed])
        else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    static func string<T: Encodable>(encoding value: T) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        encoder.dataEncodingStrategy = .base64
        guard let data = try? encoder.encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
