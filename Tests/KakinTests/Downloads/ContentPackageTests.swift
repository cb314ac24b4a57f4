import Foundation
import Testing
import ZIPFoundation

@testable import Kakin

@Suite("Content packages")
struct ContentPackageTests {
    let folder = TemporaryFolder()

    func download(
        _ package: Data, configure: (FakeContentServer) async -> Void = { _ in }
    ) async throws
        -> ContentDownload
    {
        let server = FakeContentServer(package: package, version: "3")
        await configure(server)
        let manager = DownloadManager(directory: folder.url, transport: server, chunkSize: 100)
        let request = ContentRequest(productID: "com.example.pack", url: URL(string: "https://content.example/p")!)
        let id = await manager.start(request).id
        return try #require(await manager.wait(for: id))
    }

    @Test func storedZipUnpacks() async throws {
        defer { folder.cleanUp() }
        let readme = Data("Level pack one\n".utf8)
        let image = samplePackage(size: 700)
        let zip = storedZip([
            ("Contents/", Data()), ("Contents/readme.txt", readme), ("Contents/Images/level1.bin", image),
        ])
        let done = try await download(zip)
        #expect(done.state == .finished)
        let root = try #require(done.contentURL)
        #expect(root.lastPathComponent == "3")
        #expect(try Data(contentsOf: root.appendingPathComponent("Contents/readme.txt")) == readme)
        #expect(try Data(contentsOf: root.appendingPathComponent("Contents/Images/level1.bin")) == image)
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("content.bin").path))
        #expect(folder.partialFiles.isEmpty)
    }

    @Test func deflatedZipUnpacks() async throws {
        defer { folder.cleanUp() }
        let done = try await download(Self.deflatedZip)
        #expect(done.state == .finished)
        let root = try #require(done.contentURL)
        let readme = String(
            decoding: try Data(contentsOf: root.appendingPathComponent("Contents/readme.txt")), as: UTF8.self)
        let expected =
            String(repeating: "Level pack ", count: 40)
            + String(repeating: "the quick brown fox jumps over the lazy dog 0123456789\n", count: 8)
        #expect(readme == expected)
        #expect(try Data(contentsOf: root.appendingPathComponent("Contents/hi.txt")) == Data("hi".utf8))
    }

    @Test func pathTraversalIsRefused() async throws {
        defer { folder.cleanUp() }
        let zip = storedZip([("Contents/ok.txt", Data("ok".utf8)), ("../escape.txt", Data("bad".utf8))])
        let failed = try await download(zip)
        #expect(failed.state == .failed)
        #expect(failed.error?.code == .downloadFailed)
        #expect(failed.error?.message.contains("escape.txt") == true)
        #expect(!FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("Content/escape.txt").path))
        let product = folder.url.appendingPathComponent("Content/com.example.pack")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: product.path)) ?? []).isEmpty)
        #expect(folder.partialFiles.isEmpty)
    }

    @Test(arguments: ["../a", "a/../../b", "/etc/passwd", "\\evil", "C:/x", "a\\..\\b", "", "./"])
    func unsafeNamesAreRefused(name: String) {
        #expect(throws: KakinError.self) { try ZipArchive.safeComponents(name) }
    }

    @Test func safeNamesKeepTheirComponents() throws {
        #expect(try ZipArchive.safeComponents("Contents/./a/b.txt") == ["Contents", "a", "b.txt"])
        #expect(try ZipArchive.safeComponents("Contents/dir/") == ["Contents", "dir"])
        #expect(try ZipArchive.safeComponents("a..b/c") == ["a..b", "c"])
    }

    @Test func damagedEntryFailsItsChecksum() async throws {
        defer { folder.cleanUp() }
        var zip = storedZip([("a.txt", Data("abcdef".utf8))])
        zip[30 + 5 + 2] ^= 0x01  // a byte of the entry's data
        #expect(throws: KakinError.self) { try ZipArchive(zip).extract(into: folder.url) }
    }

    /// A package as a content tool would make it: deflated entries, written by ZIPFoundation.
    func madePackage(_ build: (Archive) throws -> Void) throws -> Data {
        let archive = try Archive(accessMode: .create)
        try build(archive)
        return try #require(archive.data)
    }

    @Test func deflatedPackagesMadeByAZipToolUnpack() async throws {
        defer { folder.cleanUp() }
        let text = Data(String(repeating: "コンテンツ level data 0123456789\n", count: 500).utf8)
        let zip = try madePackage { archive in
            try archive.addEntry(with: "Contents/", type: .directory, uncompressedSize: Int64(0)) { _, _ in Data() }
            try archive.addEntry(
                with: "Contents/levels.txt", type: .file, uncompressedSize: Int64(text.count),
                compressionMethod: .deflate
            ) { position, size in text.subdata(in: Int(position)..<Int(position) + size) }
        }
        #expect(zip.count < text.count / 4, "the entry is really deflated")
        let done = try await download(zip)
        #expect(done.state == .finished)
        #expect(try Data(contentsOf: try #require(done.contentURL).appendingPathComponent("Contents/levels.txt")) == text)
    }

    @Test func symbolicLinksAreRefused() async throws {
        defer { folder.cleanUp() }
        let zip = try madePackage { archive in
            try archive.addEntry(with: "Contents/ok.txt", type: .file, uncompressedSize: Int64(2)) { _, _ in
                Data("ok".utf8)
            }
            try archive.addEntry(with: "Contents/passwd", type: .symlink, uncompressedSize: Int64(11)) { _, _ in
                Data("/etc/passwd".utf8)
            }
        }
        let failed = try await download(zip)
        #expect(failed.state == .failed)
        #expect(failed.error?.message.contains("symbolic link") == true)
        let product = folder.url.appendingPathComponent("Content/com.example.pack")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: product.path)) ?? []).isEmpty)
    }

    @Test func otherBytesBecomeContentBin() async throws {
        defer { folder.cleanUp() }
        let done = try await download(samplePackage(size: 250)) { await $0.omitContentHeaders() }
        #expect(done.state == .finished)
        let sha = FakeContentServer.sha256(samplePackage(size: 250))
        #expect(done.contentVersion == String(sha.prefix(16)))
        #expect(
            try Data(contentsOf: done.contentURL!.appendingPathComponent("content.bin")) == samplePackage(size: 250))
    }

    @Test func requestsForServerAndSandbox() {
        let server = ContentRequest.purchaseServer(
            URL(string: "https://iap.example.com")!, productID: "com.example.levels", bundleID: "com.example.app",
            appUserID: "user 1", publishableKey: "pk_live_1")
        #expect(
            server.url.absoluteString
                == "https://iap.example.com/v1/content/com.example.levels?bundleId=com.example.app&appUserId=user%201")
        #expect(server.headers == ["X-Kakin-Key": "pk_live_1"])
        let sandbox = ContentRequest.sandbox(
            URL(string: "http://127.0.0.1:8080")!, testerID: "tester-1", productID: "com.example.levels")
        #expect(
            sandbox.url.absoluteString == "http://127.0.0.1:8080/v1/device/testers/tester-1/content/com.example.levels")
        #expect(sandbox.headers.isEmpty)
    }

    @Test func statesMirrorStoreKit() {
        #expect(DownloadState.allRawValues == [0, 1, 2, 3, 4, 5])
        #expect(ContentDownload.timeRemainingUnknown == -1)
    }

    /// A zip with deflated entries (fixed-Huffman blocks) and a folder entry.
    static let deflatedZip = Data(
        base64Encoded:
            "UEsDBBQAAAAIAM+mdV0AAAAAAgAAAAAAAAAJAAAAQ29udGVudHMvAwBQSwMEFAAAAAgAz6Z1Xd6zY4pJAAAAcAMAABMAAABDb250ZW50cy9yZWFkbWUudHh080ktS81RKEhMzlbwGWUOHWZJRqpCYWkmkJVUlF+ep5CWX6GQVZpbUKyQX5ZaBJbOSayqVEjJT1cwMDQyNjE1M7ew5BrVNsDaAFBLAwQUAAAACADPpnVdrCqT2AQAAAACAAAADwAAAENvbnRlbnRzL2hpLnR4dMvIBABQSwECFAMUAAAACADPpnVdAAAAAAIAAAAAAAAACQAAAAAAAAAAABAA/UEAAAAAQ29udGVudHMvUEsBAhQDFAAAAAgAz6Z1Xd6zY4pJAAAAcAMAABMAAAAAAAAAAAAAAIABKQAAAENvbnRlbnRzL3JlYWRtZS50eHRQSwECFAMUAAAACADPpnVdrCqT2AQAAAACAAAADwAAAAAAAAAAAAAAgAGjAAAAQ29udGVudHMvaGkudHh0UEsFBgAAAAADAAMAtQAAANQAAAAAAA=="
    )!
}

extension DownloadState {
    /// Raw values of every state, in order.
    static var allRawValues: [Int] {
        [DownloadState.waiting, .active, .paused, .finished, .failed, .cancelled].map(\.rawValue)
    }
}
