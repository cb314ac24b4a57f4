import Foundation
import Testing

/// Apple's test vectors, read from the shared fixtures folder beside the repository.
///
/// The folder is `../shared/fixtures` relative to the repository root. It is not part of the
/// repository (Apple's files are not copied in); when it is absent, the tests that need it are
/// skipped with ``skipMessage`` instead of failing:
///
/// ```swift
/// @Test(.enabled(if: SharedFixtures.available, SharedFixtures.skipMessage))
/// ```
///
/// Paths are relative to Apple's library folder, `../shared/fixtures/apple-library`, such as
/// `mock_signed_data/testNotification` or `xcode/xcode-signed-transaction`.
public enum SharedFixtures {
    /// `../shared/fixtures`, beside the repository.
    public static let directory: URL = ExampleApp.repositoryRoot.deletingLastPathComponent()
        .appendingPathComponent("shared", isDirectory: true)
        .appendingPathComponent("fixtures", isDirectory: true)

    /// `apple-library` in the shared fixtures: the test vectors of Apple's App Store Server Library.
    public static let appleLibrary = directory.appendingPathComponent("apple-library", isDirectory: true)

    /// Whether the shared fixtures are present on this machine.
    public static var available: Bool { FileManager.default.fileExists(atPath: appleLibrary.path) }

    /// Why a test that needs the shared fixtures is skipped when they are absent.
    public static let skipMessage: Comment = "Apple's fixtures are not present at ../shared/fixtures; skipped"

    /// The file at `path` in Apple's library folder.
    public static func url(_ path: String) -> URL { appleLibrary.appendingPathComponent(path) }

    /// The file system path of the file at `path` in Apple's library folder.
    public static func path(_ path: String) -> String { url(path).path }

    /// The bytes of the file at `path` in Apple's library folder.
    public static func data(_ path: String) throws -> Data {
        try Data(contentsOf: url(path))
    }

    /// The text of the file at `path` in Apple's library folder, without surrounding white space.
    public static func text(_ path: String) throws -> String {
        String(decoding: try data(path), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Apple's model test vectors, `models/` in the library folder.
    public static let modelsDirectory = appleLibrary.appendingPathComponent("models", isDirectory: true)

    /// The bytes of `models/<name>.json`.
    public static func model(_ name: String) throws -> Data {
        try Data(contentsOf: modelsDirectory.appendingPathComponent("\(name).json"))
    }

    /// The names (without `.json`) of every file in `models/`.
    public static func modelNames() throws -> Set<String> {
        let files = try FileManager.default.contentsOfDirectory(atPath: modelsDirectory.path)
        return Set(files.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) })
    }

    /// The decoded payload (middle segment) of the compact JWS stored at `path` in the library
    /// folder, such as `xcode/xcode-signed-transaction`.
    public static func jwsPayload(_ path: String) throws -> Data {
        let segments = try text(path).split(separator: ".")
        guard segments.count == 3 else { throw FixtureError.notAJWS(path) }
        var base64 = segments[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let payload = Data(base64Encoded: base64) else { throw FixtureError.notAJWS(path) }
        return payload
    }

    /// A fixture that is not what the test expected.
    public enum FixtureError: Error {
        /// The file at this path is not a compact JWS (three segments of base64url).
        case notAJWS(String)
    }
}
