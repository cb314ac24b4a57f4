import Crypto
import Foundation
import Testing

@testable import KakinServer
@testable import KakinLedger

@Suite("The server key file")
struct ServerKeyFileTests {
    @Test("servers starting together without a key file all sign with the one key the file holds")
    func startingTogetherAgreeOnOneKey() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-key-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for trial in 0..<10 {
            let path = directory.appendingPathComponent("server-key-\(trial).pem").path
            // Eight starts at once, each on a thread of its own, as replicas are separate processes.
            let keys = try await withThrowingTaskGroup(of: Data.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await withCheckedThrowingContinuation { continuation in
                            Thread.detachNewThread {
                                continuation.resume(
                                    with: Result {
                                        try ServerParts.loadOrMakeKey(path, key: "serverKey").publicKey.rawRepresentation
                                    })
                            }
                        }
                    }
                }
                return try await group.reduce(into: [Data]()) { $0.append($1) }
            }
            let onDisk = try P256.Signing.PrivateKey(pemRepresentation: String(contentsOfFile: path, encoding: .utf8))
            #expect(Set(keys) == [onDisk.publicKey.rawRepresentation], "trial \(trial): \(Set(keys).count) keys")
        }
        #expect(try !FileManager.default.contentsOfDirectory(atPath: directory.path).contains { $0.hasPrefix(".") })
    }
}
