import Foundation
import Testing

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

    @Test func otherBytesBecomeContentBin() async throws {
        defer { folder.cleanUp() }
        let done = try await download(samplePackage(size: 250)) { await $0.omitContentHeaders() }
        #expect(done.state == .finished)
        let sha = FakeContentServer.sha256(samplePackage(size: 250))
        #expect(done.contentVersion == String(sha.prefix(16)))
        #expect(
            try Data(contentsOf: done.contentURL!.appendingPathComponent("content.bin")) == samplePackage(size: 250))
    }

    @Test func inflatesDynamicHuffmanBlocks() throws {
        let expected = (0..<200).map { "line \($0): value \($0 * $0 % 997)\n" }.joined()
        let raw = try #require(Data(base64Encoded: Self.dynamicBlock))
        let output = try Inflate.decompress(Array(raw), expectedSize: expected.utf8.count)
        #expect(String(decoding: output, as: UTF8.self) == expected)
        #expect(throws: Inflate.Failure.self) { try Inflate.decompress(Array(raw), expectedSize: 100) }
        #expect(throws: Inflate.Failure.self) { try Inflate.decompress(Array(raw.prefix(400)), expectedSize: 3859) }
    }

    @Test func inflatesStoredBlocks() throws {
        let raw: [UInt8] = [1, 12, 0, 243, 255] + Array("stored block".utf8)
        #expect(try Inflate.decompress(raw, expectedSize: 12) == Array("stored block".utf8))
        var broken = raw
        broken[3] = 0
        #expect(throws: Inflate.Failure.self) { try Inflate.decompress(broken, expectedSize: 12) }
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

    /// A raw DEFLATE stream with a dynamic-Huffman block.
    static let dynamicBlock =
        "TZc7rlsxDET7rOIt4VI/StlNihQBjHTJ+uPAnDnqfAl9DkcUR379+v3z6/n+9ffH68/7x7fX/+/Qd3y+m77H57vr+3y+h8evT2Aq0OYnsBToNSK9ZK2xFVi1yVFgF0UYMx6BQto0yrAxaqXo8NVuAfIpogBa1LHIQ6MM3rbWMnpv2vGQrzQ0/RB9M/0YGoXUu9Zqpp+tdmymn1lczfRL9M30y6NMn17L9OkdkV5c3fRH9N30Rzl207esCKXSKoLysxD6pfyuEMofjTJ7T621EVAbHtSqdIbZ19MrZPalpIfZc9Vaw/B71o7D9Ker+E3fS4axqErNo2yijmdQNlGSjkONFMM0/Hx0uYD3KOC11gReO07gxTWBLx0m8EPzgJ91PhP4LE0n8KcY1qV8qbUMn12jGjLXWouyydpxUTePQtRNLyHW1Wg0KlGwDmjRbNSPlulTCSU1HyVXml79IGk3KtTsaFqi5kCbYkgu7Cgh0vDpUYY/XmsjhLAOB6R2SruJEmIDnxpF3YxaayO9qmsPtKkIyo8SYi821CiUV0Vsus2q6tqHFIvh0Ol1iY/h+1MTz9UrK8XTaXl1isfwexXEmfSIitBuhubhUKqRc5VNnc+hVap1vc0JVIWCSrWbga+7Fw/8ai/xkIC0jocMvCsp2OQecthNMZI4qRhHEEK53Fb5B3bbp+bit3Pblek9OqzAcbtDVNHytpTR8bjLtZQupntWV4xroEYfl+2quqJd3d/jGr1R6eK8keLDegcvDq5ySgLM9zAuWU/yYb+jm+/Ap6O8DHhIAxy4qUEFFjxS+mHCqVYTlw07xHGkt3Uac3pcUvOSr19NSelixV1NPC4vdgVhxqd7HC8Jv6mw4/n4GUdr8jsOQ95eDltwaljy0nsixlVVxqOqHLtcefn5GDQaj8Md1I8CYx6WBWfOrVPDmn1P8ebxeOp1OaT85c7KFnfufspe9uxawZ+PBcWgu94NgUMvPb0Ciz6+L3h0f7weD9PuuRid7xA23Z0uPr30PInLqPWaC5y6u2fg1SslFWYdkgqz7j5c3DrD25KGp9JwrRR+nb71GHZYgcuxrTyWvX1d9nU1VFOY9nTN49pnChnf7s3rXWl4LkUlQff11vYfn8v9hIx3Nx8a5j3d0HDv4+uHfXd5deDf6ULDwMMFjoVP2y4efizVuf6tqQhw8Xw/lv4B"
}

extension DownloadState {
    /// Raw values of every state, in order.
    static var allRawValues: [Int] {
        [DownloadState.waiting, .active, .paused, .finished, .failed, .cancelled].map(\.rawValue)
    }
}
