import Foundation
import Kakin
import Testing

@Suite("DownloadManager")
struct DownloadManagerTests {
    let folder = TemporaryFolder()
    let clock = TestClock()
    let request = ContentRequest(
        productID: "com.example.levels", url: URL(string: "https://content.example/v1/content/com.example.levels")!,
        headers: ["X-Kakin-Key": "pk_test"], transactionID: "2000000123")

    func manager(_ server: FakeContentServer, chunkSize: Int = 1024) -> DownloadManager {
        let clock = self.clock
        return DownloadManager(directory: folder.url, transport: server, chunkSize: chunkSize) { clock.now() }
    }

    /// Pauses the first download when request `number` arrives (its chunk is dropped).
    func pause(_ manager: DownloadManager, at number: Int, on server: FakeContentServer) async {
        await server.onRequest { request in
            guard request == number, let id = await manager.downloads().first?.id else { return }
            await manager.pause(id)
        }
    }

    @Test func downloadsWholePackageWithProgress() async throws {
        defer { folder.cleanUp() }
        let package = samplePackage(size: 10_000)
        let server = FakeContentServer(package: package, version: "1.2", clock: clock)
        let manager = manager(server)
        let stream = await manager.events()
        let started = await manager.start(request)
        #expect(started.state == .active)  // a slot was free; the stream saw it waiting first
        #expect(started.transactionID == "2000000123")
        let done = try #require(await manager.wait(for: started.id))
        #expect(done.state == .finished)
        #expect(done.progress == 1)
        #expect(done.contentVersion == "1.2")
        #expect(done.contentLength == 10_000)
        let contentURL = try #require(done.contentURL)
        #expect(contentURL.path.hasSuffix("Content/com.example.levels/1.2"))
        #expect(try Data(contentsOf: contentURL.appendingPathComponent("content.bin")) == package)
        #expect(folder.partialFiles.isEmpty)

        let seen = await events(stream, until: .finished)
        #expect(seen.map(\.state).first == .waiting)
        let active = seen.filter { $0.state == .active }
        let progress = active.map(\.progress)
        #expect(progress == progress.sorted())
        #expect(seen.last?.progress == 1)
        #expect(seen.last?.timeRemaining == 0)
        // One second per 1024-byte chunk: after the first chunk, 8976 bytes are left.
        let first = try #require(active.first { $0.download.bytesReceived == 1024 })
        #expect(abs(first.timeRemaining - 8976.0 / 1024.0) < 0.001)
        #expect(active.first?.timeRemaining == ContentDownload.timeRemainingUnknown)

        let requests = await server.requests
        #expect(requests.count == 10)
        #expect(requests.first?.range == "bytes=0-1023")
        #expect(requests.first?.ifRange == nil)
        #expect(requests.last?.range == "bytes=9216-9999")
        #expect(requests.dropFirst().allSatisfy { $0.ifRange == FakeContentServer.sha256Tag(package) })
        #expect(requests.allSatisfy { $0.headers["X-Kakin-Key"] == "pk_test" })
        let installed = await manager.contentURL(forProductID: "com.example.levels")
        #expect(installed?.standardizedFileURL.path == contentURL.standardizedFileURL.path)
    }

    @Test func pauseThenResumeContinuesFromReceivedByte() async throws {
        defer { folder.cleanUp() }
        let package = samplePackage(size: 8_000)
        let server = FakeContentServer(package: package)
        let manager = manager(server)
        await pause(manager, at: 4, on: server)
        let id = await manager.start(request).id
        let paused = try #require(await manager.wait(for: id))
        #expect(paused.state == .paused)
        #expect(paused.bytesReceived == 3072)
        #expect(paused.progress == Float(3072) / 8000)
        #expect(await manager.resumableDownloads().map(\.id) == [id])
        let part = folder.url.appendingPathComponent("Downloads/\(id).part")
        #expect(try Data(contentsOf: part) == package.prefix(3072))

        await manager.resume(id)
        let done = try #require(await manager.wait(for: id))
        #expect(done.state == .finished)
        let requests = await server.requests
        #expect(requests[4].range == "bytes=3072-4095")
        #expect(requests[4].ifRange == FakeContentServer.sha256Tag(package))
        #expect(requests.count == 9)
        #expect(try Data(contentsOf: done.contentURL!.appendingPathComponent("content.bin")) == package)
    }

    @Test func newManagerResumesAfterRestart() async throws {
        defer { folder.cleanUp() }
        let package = samplePackage(size: 6_000)
        let server = FakeContentServer(package: package, version: "7")
        let first = manager(server)
        await pause(first, at: 3, on: server)
        let id = await first.start(request).id
        #expect(await first.wait(for: id)?.state == .paused)

        await server.onRequest { _ in }
        let second = manager(server)
        let found = await second.resumableDownloads()
        #expect(found.count == 1)
        #expect(found.first?.id == id)
        #expect(found.first?.state == .paused)
        #expect(found.first?.bytesReceived == 2048)
        #expect(found.first?.productID == "com.example.levels")
        #expect(found.first?.transactionID == "2000000123")
        let before = await server.requests.count
        await second.resumeAll()
        let done = try #require(await second.wait(for: id))
        #expect(done.state == .finished)
        #expect(done.contentVersion == "7")
        let resumed = await server.requests[before]
        #expect(resumed.range == "bytes=2048-3071")
        #expect(resumed.ifRange == FakeContentServer.sha256Tag(package))
        #expect(resumed.headers["X-Kakin-Key"] == "pk_test")
        #expect(try Data(contentsOf: done.contentURL!.appendingPathComponent("content.bin")) == package)
    }

    @Test func restartDropsBytesTheRecordDoesNotVouchFor() async throws {
        defer { folder.cleanUp() }
        let package = samplePackage(size: 4_000)
        let server = FakeContentServer(package: package)
        let first = manager(server)
        await pause(first, at: 3, on: server)
        let id = await first.start(request).id
        #expect(await first.wait(for: id)?.bytesReceived == 2048)
        // Bytes written after the last record (a crash between the two writes).
        let part = folder.url.appendingPathComponent("Downloads/\(id).part")
        let handle = try FileHandle(forWritingTo: part)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: 0xAA, count: 500))
        try handle.close()

        await server.onRequest { _ in }
        let second = manager(server)
        #expect(await second.download(id)?.bytesReceived == 2048)
        #expect(try Data(contentsOf: part).count == 2048)
        await second.resume(id)
        let done = try #require(await second.wait(for: id))
        #expect(done.state == .finished)
        #expect(try Data(contentsOf: done.contentURL!.appendingPathComponent("content.bin")) == package)

        try await second.deleteContent(forProductID: request.productID)
        #expect(await second.contentURL(forProductID: request.productID) == nil)
    }

    @Test func staleETagRestartsFromZero() async throws {
        defer { folder.cleanUp() }
        let old = samplePackage(size: 5_000, seed: 1)
        let new = samplePackage(size: 4_500, seed: 2)
        let server = FakeContentServer(package: old, version: "1")
        let manager = manager(server)
        await pause(manager, at: 3, on: server)
        let id = await manager.start(request).id
        #expect(await manager.wait(for: id)?.bytesReceived == 2048)

        await server.replace(with: new, version: "2")
        await manager.resume(id)
        let done = try #require(await manager.wait(for: id))
        #expect(done.state == .finished)
        #expect(done.contentVersion == "2")
        #expect(done.contentLength == 4_500)
        #expect(try Data(contentsOf: done.contentURL!.appendingPathComponent("content.bin")) == new)
        let requests = await server.requests
        #expect(requests[3].ifRange == FakeContentServer.sha256Tag(old))
        #expect(requests.count == 4)
    }

    @Test func hashMismatchFailsAndCleansUp() async throws {
        defer { folder.cleanUp() }
        let server = FakeContentServer(package: samplePackage(size: 3_000))
        await server.corrupt(byteAt: 2_500)
        let manager = manager(server)
        let id = await manager.start(request).id
        let failed = try #require(await manager.wait(for: id))
        #expect(failed.state == .failed)
        let error = try #require(failed.error)
        #expect(error.code == .downloadFailed)
        #expect(error.message.contains("hash mismatch"))
        #expect(!error.isRetryable)
        #expect(folder.partialFiles.isEmpty)
        #expect(failed.contentURL == nil)
        #expect(await manager.contentURL(forProductID: request.productID) == nil)
        #expect(await manager.resumableDownloads().isEmpty)
    }

    @Test func cancelRemovesPartialData() async throws {
        defer { folder.cleanUp() }
        let server = FakeContentServer(package: samplePackage(size: 5_000))
        let manager = manager(server)
        await pause(manager, at: 3, on: server)
        let id = await manager.start(request).id
        #expect(await manager.wait(for: id)?.state == .paused)
        #expect(folder.partialFiles.sorted() == ["\(id).json", "\(id).part"])
        let cancelled = try #require(await manager.cancel(id))
        #expect(cancelled.state == .cancelled)
        #expect(folder.partialFiles.isEmpty)
        #expect(await manager.resume(id)?.state == .cancelled)
        #expect(await DownloadManager(directory: folder.url, transport: server).resumableDownloads().isEmpty)
    }

    @Test func cancelWhileActiveStopsTheDownload() async throws {
        defer { folder.cleanUp() }
        let server = FakeContentServer(package: samplePackage(size: 5_000))
        let manager = manager(server)
        await server.onRequest { number in
            guard number == 2, let id = await manager.downloads().first?.id else { return }
            await manager.cancel(id)
        }
        let id = await manager.start(request).id
        #expect(await manager.wait(for: id)?.state == .cancelled)
        #expect(folder.partialFiles.isEmpty)
        #expect(await server.requests.count == 2)
    }

    @Test func transportErrorFailsRetryablyAndResumes() async throws {
        defer { folder.cleanUp() }
        let package = samplePackage(size: 4_000)
        let server = FakeContentServer(package: package)
        await server.fail(request: 3, with: URLError(.networkConnectionLost))
        let manager = manager(server)
        let id = await manager.start(request).id
        let failed = try #require(await manager.wait(for: id))
        #expect(failed.state == .failed)
        #expect(failed.error?.code == .network)
        #expect(failed.error?.isRetryable == true)
        #expect(failed.bytesReceived == 2048)
        #expect(await manager.resumableDownloads().map(\.id) == [id])

        // Starting the same product again picks the failed download up where it stopped.
        #expect(await manager.start(request).id == id)
        let done = try #require(await manager.wait(for: id))
        #expect(done.state == .finished)
        #expect(done.error == nil)
        #expect(await server.requests[3].range == "bytes=2048-3071")
        #expect(try Data(contentsOf: done.contentURL!.appendingPathComponent("content.bin")) == package)
    }

    @Test func serverErrorIsRetryable() async throws {
        defer { folder.cleanUp() }
        let server = FakeContentServer(package: samplePackage(size: 100))
        await server.answer(status: 503)
        let manager = manager(server)
        let id = await manager.start(request).id
        let failed = try #require(await manager.wait(for: id))
        #expect(failed.state == .failed)
        #expect(failed.error?.code == .network)
        #expect(failed.error?.isRetryable == true)
    }

    @Test func notEntitledFails() async throws {
        defer { folder.cleanUp() }
        let server = FakeContentServer(package: samplePackage(size: 100))
        await server.answer(status: 403)
        let manager = manager(server)
        let id = await manager.start(request).id
        let failed = try #require(await manager.wait(for: id))
        #expect(failed.state == .failed)
        #expect(failed.error?.code == .downloadFailed)
        #expect(failed.error?.message.contains("not entitled") == true)
        #expect(failed.error?.isRetryable == false)
        #expect(folder.partialFiles.isEmpty)
        #expect(await manager.resume(id)?.state == .failed)
    }

    @Test func anExpiredCustomerTokenFailsRetryablyAndAFreshOneResumes() async throws {
        defer { folder.cleanUp() }
        let package = samplePackage(size: 4_000)
        let server = FakeContentServer(package: package)
        await server.onRequest { number in
            if number == 3 { await server.requireCustomerToken("fresh") }
        }
        var first = request
        first.headers["X-Kakin-Customer-Token"] = "first"
        let manager = manager(server)
        let id = await manager.start(first).id
        let failed = try #require(await manager.wait(for: id))
        #expect(failed.state == .failed && failed.bytesReceived == 2048)
        #expect(failed.error?.code == .downloadFailed && failed.error?.isRetryable == true)
        #expect(failed.error?.cause == "customerTokenExpired")

        // The same product with a fresh token: the kept bytes stay, the new token goes from now on.
        var second = request
        second.headers["X-Kakin-Customer-Token"] = "fresh"
        #expect(await manager.start(second).id == id)
        let done = try #require(await manager.wait(for: id))
        #expect(done.state == .finished)
        let requests = await server.requests
        #expect(requests.count == 5 && requests[3].range == "bytes=2048-3071")
        #expect(requests[3...].allSatisfy { $0.headers["X-Kakin-Customer-Token"] == "fresh" })
        #expect(try Data(contentsOf: done.contentURL!.appendingPathComponent("content.bin")) == package)
    }

    @Test func aRefusedKeyFailsForGood() async throws {
        defer { folder.cleanUp() }
        let server = FakeContentServer(package: samplePackage(size: 100))
        await server.answer(status: 401)
        let manager = manager(server)
        let failed = try #require(await manager.wait(for: await manager.start(request).id))
        #expect(failed.error?.code == .downloadFailed && failed.error?.isRetryable == false)
    }

    @Test func waitingDownloadsStartWhenASlotFrees() async throws {
        defer { folder.cleanUp() }
        let server = FakeContentServer(package: samplePackage(size: 2_000))
        let clock = self.clock
        let manager = DownloadManager(
            directory: folder.url, transport: server, chunkSize: 1024, maxConcurrentDownloads: 1
        ) { clock.now() }
        var other = request
        other.productID = "com.example.music"
        let first = await manager.start(request)
        let second = await manager.start(other)
        #expect(await manager.download(second.id)?.state == .waiting)
        #expect(await manager.wait(for: first.id)?.state == .finished)
        #expect(await manager.wait(for: second.id)?.state == .finished)
        #expect(await manager.downloads().map(\.productID) == ["com.example.levels", "com.example.music"])
    }
}

extension FakeContentServer {
    /// The ETag the server gives `package`.
    static func sha256Tag(_ package: Data) -> String { "\"" + sha256(package) + "\"" }
}
