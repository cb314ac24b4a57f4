import Foundation
import Testing

/// The built `kakin` binary, run as a user would: bad input gets one line and a non-zero exit,
/// never a crash or a stack trace.
@Suite struct BinaryTests {
    static let binary: URL? = {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let candidates = [".build/debug/kakin", ".build/release/kakin"].map { repository.appendingPathComponent($0) }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    func run(_ arguments: [String], input: Data = Data()) throws -> (status: Int32, output: String, error: String) {
        let process = Process()
        guard let binary = Self.binary else { throw CancellationError() }
        process.executableURL = binary
        process.arguments = arguments
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        let err = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    @Test(.enabled(if: binary != nil, "the kakin binary is not built (swift build); skipped"))
    func malformedStandardInputGetsOneLine() throws {
        var random = SystemRandomNumberGenerator()
        let inputs: [Data] = [
            Data(), Data("garbage".utf8), Data("a.b.c".utf8),
            Data((0..<512).map { _ in UInt8.random(in: 0...255, using: &random) }),
            Data("eyJhbGciOiJub25lIn0.eyJ9.".utf8),
        ]
        for input in inputs {
            for command in [["jws", "decode", "-"], ["jws", "verify", "-"]] {
                let result = try run(command, input: input)
                #expect(result.status == 1)
                #expect(result.error.split(separator: "\n").count == 1, "\(result.error)")
                #expect(!result.error.contains("Fatal error") && !result.error.contains("Stack dump"))
            }
        }
    }

    @Test(.enabled(if: binary != nil, "the kakin binary is not built (swift build); skipped"))
    func usageErrorsExitNonZero() throws {
        let result = try run(["jws", "verify", "--environment", "Mars", "-"])
        #expect(result.status != 0)
        #expect(result.error.contains("--environment"))
        for threads in [["--threads", "0"], ["--threads=-2"]] {
            let result = try run(["server", "--config", "/nonexistent.json"] + threads)
            #expect(result.status != 0)
            #expect(result.error.contains("--threads must be 1 or more"), "\(result.error)")
        }
    }
}
