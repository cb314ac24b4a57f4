import Foundation
import Testing

/// Runs Apple's App Store Server Library (Python) when it is installed (`scripts/bootstrap`
/// installs it), so tests can check that Apple's verifier agrees with ours.
enum ApplePythonLibrary {
    static let available: Bool = {
        (try? run(script: "import appstoreserverlibrary", arguments: []))?.status == 0
    }()

    static let skipMessage: Comment =
        "Apple's app-store-server-library for Python is not installed (scripts/bootstrap installs it); skipped"

    struct Result {
        let status: Int32
        let output: String
    }

    static func run(script: String, arguments: [String]) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }
}
