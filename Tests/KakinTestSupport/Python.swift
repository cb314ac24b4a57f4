import Foundation
import Testing

/// `python3 -c SCRIPT ARGUMENTS…` for the tests that check Kakin against Python's implementations
/// (Apple's App Store Server Library, the `cryptography` package): the exit status, and standard
/// output and error together.
public enum Python {
    /// How a script ended.
    public struct Result: Sendable {
        /// The exit status of python3.
        public let status: Int32
        /// What it printed, standard output and error together.
        public let output: String
    }

    /// Runs `script` and waits for it without holding a thread of the tests' pool (two threads
    /// on a two-core machine, which the servers other tests run in this process need too).
    public static func run(
        _ script: String, arguments: [String] = [], environment: [String: String] = [:]
    ) async throws -> Result {
        let (process, pipe) = prepare(script, arguments, environment)
        return try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { process in
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                continuation.resume(
                    returning: Result(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self)))
            }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
    }

    /// Runs `script` and waits for it, blocking the calling thread: for the checks made once,
    /// before any test runs.
    private static func runBlocking(_ script: String) throws -> Result {
        let (process, pipe) = prepare(script, [], [:])
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    /// Whether python3 is installed and imports `module`.
    public static func canImport(_ module: String) -> Bool {
        (try? runBlocking("import \(module)"))?.status == 0
    }

    private static func prepare(
        _ script: String, _ arguments: [String], _ environment: [String: String]
    ) -> (Process, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script] + arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        return (process, pipe)
    }
}

/// Apple's App Store Server Library for Python (`scripts/bootstrap` installs it), so that tests can
/// check that Apple's verifier agrees with Kakin's.
public enum ApplePythonLibrary {
    /// Whether it is installed.
    public static let available = Python.canImport("appstoreserverlibrary")

    /// Why a test that needs it is skipped.
    public static let skipMessage: Comment =
        "Apple's app-store-server-library for Python is not installed (scripts/bootstrap installs it); skipped"
}

/// Python's `cryptography` package, the library Apple's Python verifier reads OCSP with.
public enum PythonCryptography {
    /// Whether it is installed.
    public static let available = Python.canImport("cryptography.x509.ocsp")

    /// Why a test that needs it is skipped.
    public static let skipMessage: Comment = "python3 with the cryptography package is not installed; skipped"
}
