public import Foundation

/// Downloads products' hosted content, the way StoreKit's `SKPaymentQueue` downloads `SKDownload`s:
/// start, pause, resume and cancel, with progress and time remaining, then a verified, unpacked
/// folder at ``ContentDownload/contentURL``.
///
/// Bytes arrive in chunks (one `Range` request each) into `<downloads>/<id>.part`, beside a JSON
/// record of what the server said (ETag, SHA-256, size, version) and how far the download got. A
/// paused or failed download resumes from the byte it reached, also in a new manager on the same
/// folder after the app restarted (``resumableDownloads()``). When every byte is in, the package's
/// SHA-256 must equal the server's; the package is then unpacked into
/// `<content>/<productID>/<version>/` (a zip is extracted, other bytes become `content.bin`).
///
/// Finish the transaction that granted the content only once its download has finished.
public actor DownloadManager {
    private struct Job {
        var record: DownloadRecord
        var state: DownloadState
        var error: KakinError?
        var contentURL: URL?
        /// Which run of the download loop owns the job; a pause or cancel retires the current one.
        var run = 0
        var finishing = false
        var sessionStart: Date?
        var sessionBytes: Int64 = 0
        var timeRemaining: TimeInterval = ContentDownload.timeRemainingUnknown
        var restarts = 0
    }

    private let store: DownloadStore
    private let transport: any DownloadTransport
    private let chunkSize: Int64
    private let maxConcurrentDownloads: Int
    private let clock: @Sendable () -> Date
    private var jobs: [String: Job] = [:]
    private var order: [String] = []
    private var subscribers: [UUID: AsyncStream<DownloadEvent>.Continuation] = [:]
    private var waiters: [String: [CheckedContinuation<ContentDownload?, Never>]] = [:]

    /// A manager keeping partial downloads in `directory/Downloads` and unpacked content in
    /// `directory/Content`. Partial downloads already there are listed as paused.
    ///
    /// - Parameters:
    ///   - directory: The manager's folder, for example ``defaultDirectory``.
    ///   - transport: How bytes are fetched; URLSession unless a test injects another.
    ///   - chunkSize: Bytes per `Range` request; smaller chunks pause sooner and report progress more often.
    ///   - maxConcurrentDownloads: Downloads active at once; the others wait.
    ///   - clock: The time, for throughput and time remaining.
    public init(
        directory: URL, transport: any DownloadTransport = URLSessionDownloadTransport(), chunkSize: Int = 256 * 1024,
        maxConcurrentDownloads: Int = 2, clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        store = DownloadStore(
            downloads: directory.appendingPathComponent("Downloads", isDirectory: true),
            content: directory.appendingPathComponent("Content", isDirectory: true))
        self.transport = transport
        self.chunkSize = Int64(max(1, chunkSize))
        self.maxConcurrentDownloads = max(1, maxConcurrentDownloads)
        self.clock = clock
        for record in store.loadRecords() {
            jobs[record.id] = Job(record: record, state: .paused)
            order.append(record.id)
        }
    }

    deinit {
        for continuation in subscribers.values { continuation.finish() }
    }

    /// `Library/Caches/Kakin` (where StoreKit puts hosted content too); the system may purge it,
    /// so move content an app must keep elsewhere.
    public static var defaultDirectory: URL {
        let caches =
            FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        return caches.appendingPathComponent("Kakin", isDirectory: true)
    }

    // MARK: Observing

    /// Every change from now on: state changes, and progress while active.
    public func events() -> AsyncStream<DownloadEvent> {
        let (stream, continuation) = AsyncStream<DownloadEvent>.makeStream()
        let key = UUID()
        subscribers[key] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(key) }
        }
        return stream
    }

    /// Every download this manager knows, oldest first.
    public func downloads() -> [ContentDownload] { order.compactMap(snapshot) }

    /// One download, if known.
    public func download(_ id: String) -> ContentDownload? { snapshot(id) }

    /// Paused downloads, and failed ones whose error is retryable: those ``resume(_:)`` continues.
    public func resumableDownloads() -> [ContentDownload] {
        downloads().filter { $0.state == .paused || ($0.state == .failed && $0.error?.isRetryable == true) }
    }

    /// Waits until the download is not waiting or active any more (paused, finished, failed or
    /// cancelled) and returns it; `nil` for an unknown ID.
    public func wait(for id: String) async -> ContentDownload? {
        guard let job = jobs[id] else { return nil }
        if job.state != .waiting && job.state != .active { return snapshot(id) }
        return await withCheckedContinuation { waiters[id, default: []].append($0) }
    }

    /// The newest unpacked content of a product on this device, if any.
    public func contentURL(forProductID productID: String) -> URL? { store.installedContent(productID: productID) }

    /// Deletes every unpacked version of a product's content.
    public func deleteContent(forProductID productID: String) throws {
        let folder = store.content.appendingPathComponent(DownloadStore.safeName(productID))
        if FileManager.default.fileExists(atPath: folder.path) { try FileManager.default.removeItem(at: folder) }
    }

    // MARK: Controlling

    /// Starts downloading a product's content. If a download of the product is already under way,
    /// paused, or failed in a way that can be retried, that one is resumed and returned instead.
    @discardableResult
    public func start(_ request: ContentRequest) -> ContentDownload {
        let current = order.compactMap { jobs[$0] }.first {
            $0.record.productID == request.productID
                && (!$0.state.isTerminal || ($0.state == .failed && $0.error?.isRetryable == true))
        }
        if let current {
            resume(current.record.id)
            return snapshot(current.record.id)!
        }
        let id = UUID().uuidString.lowercased()
        let record = DownloadRecord(
            id: id, productID: request.productID, url: request.url, headers: request.headers,
            transactionID: request.transactionID, bytesReceived: 0, createdAt: clock())
        jobs[id] = Job(record: record, state: .waiting)
        order.append(id)
        do { try store.save(record) } catch { return fail(id, error) }
        emit(id)
        schedule()
        return snapshot(id)!
    }

    /// Pauses a waiting or active download; the chunk in flight is dropped and its bytes fetched
    /// again on resume. A download whose bytes are all in finishes regardless.
    @discardableResult
    public func pause(_ id: String) -> ContentDownload? {
        guard var job = jobs[id], job.state == .waiting || job.state == .active, !job.finishing else {
            return snapshot(id)
        }
        job.state = .paused
        job.run += 1
        job.timeRemaining = ContentDownload.timeRemainingUnknown
        jobs[id] = job
        settle(id)
        schedule()
        return snapshot(id)
    }

    /// Resumes a paused download, or a failed one whose error is retryable, from the byte it reached.
    @discardableResult
    public func resume(_ id: String) -> ContentDownload? {
        guard var job = jobs[id] else { return nil }
        let resumable = job.state == .paused || (job.state == .failed && job.error?.isRetryable == true)
        guard resumable else { return snapshot(id) }
        job.state = .waiting
        job.error = nil
        job.restarts = 0
        jobs[id] = job
        emit(id)
        schedule()
        return snapshot(id)
    }

    /// Resumes every resumable download (for example after the app restarted).
    public func resumeAll() {
        for download in resumableDownloads() { resume(download.id) }
    }

    /// Cancels a download that has not finished and deletes its partial data.
    @discardableResult
    public func cancel(_ id: String) -> ContentDownload? {
        guard var job = jobs[id], job.state != .finished, job.state != .cancelled, !job.finishing else {
            return snapshot(id)
        }
        job.state = .cancelled
        job.run += 1
        job.error = nil
        job.timeRemaining = ContentDownload.timeRemainingUnknown
        jobs[id] = job
        store.remove(id)
        settle(id)
        schedule()
        return snapshot(id)
    }

    // MARK: Running

    /// Starts waiting downloads, oldest first, while slots are free.
    private func schedule() {
        var active = jobs.values.filter { $0.state == .active }.count
        for id in order where active < maxConcurrentDownloads {
            guard var job = jobs[id], job.state == .waiting else { continue }
            job.state = .active
            job.run += 1
            job.sessionStart = clock()
            job.sessionBytes = 0
            jobs[id] = job
            active += 1
            emit(id)
            let run = job.run
            Task { await self.loop(id, run: run) }
        }
    }

    /// Whether run `run` of the download still owns it.
    private func owns(_ id: String, run: Int) -> Bool {
        guard let job = jobs[id] else { return false }
        return job.run == run && job.state == .active
    }

    /// Fetches chunk after chunk until the package is in, then verifies and unpacks it.
    private func loop(_ id: String, run: Int) async {
        while owns(id, run: run), let record = jobs[id]?.record {
            if let total = record.contentLength, record.bytesReceived >= total {
                await finish(id, run: run)
                return
            }
            let offset = record.bytesReceived
            let length = record.contentLength.map { min(chunkSize, $0 - offset) } ?? chunkSize
            var headers = record.headers
            headers["Range"] = "bytes=\(offset)-\(offset + length - 1)"
            if let etag = record.etag { headers["If-Range"] = etag }
            let response: (status: Int, headers: [String: String], body: Data)
            do {
                response = try await transport.fetch(url: record.url, headers: headers, range: (offset, length))
            } catch {
                guard owns(id, run: run) else { return }
                let failure =
                    error as? KakinError
                    ?? KakinError(.network, "the content of \(record.productID) could not be fetched: \(error)")
                fail(id, failure)
                return
            }
            guard owns(id, run: run) else { return }
            do {
                try apply(response, to: id, offset: offset)
            } catch {
                fail(id, error)
                return
            }
        }
    }
}

extension DownloadManager {
    /// Folds one answer into the download: new bytes, a restart, or an error.
    private func apply(
        _ response: (status: Int, headers: [String: String], body: Data), to id: String, offset: Int64
    ) throws(KakinError) {
        guard var job = jobs[id] else { return }
        let fields = Dictionary(response.headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
        let product = job.record.productID
        switch response.status {
        case 206:
            guard let range = ContentRange(fields["content-range"]), range.first == offset,
                Int64(response.body.count) == range.last - range.first + 1
            else { throw KakinError(.downloadFailed, "the server sent the wrong part of \(product)", isRetryable: true) }
            if let known = job.record.etag, let etag = fields["etag"], etag != known {
                // The server did not honour If-Range but the package changed: start again.
                try restart(&job)
                return
            }
            if job.record.etag == nil || job.record.bytesReceived == 0 {
                adopt(fields, total: range.total, into: &job.record)
            }
            try store.write(response.body, at: offset, id: id)
            job.record.bytesReceived = offset + Int64(response.body.count)
        case 200:
            // The whole package: the server ignores ranges, or the package changed (stale If-Range).
            adopt(fields, total: Int64(response.body.count), into: &job.record)
            try store.write(response.body, at: 0, id: id)
            job.record.bytesReceived = Int64(response.body.count)
        case 416:
            let total = ContentRange(fields["content-range"])?.total
            if let total, total == job.record.bytesReceived, total > 0 {
                job.record.contentLength = total
            } else {
                try restart(&job)
                return
            }
        case 403:
            throw KakinError(.downloadFailed, "not entitled to the content of \(product)")
        case 401:
            throw KakinError(.downloadFailed, "the content server refused the key for \(product)")
        case 404:
            throw KakinError(.downloadFailed, "no hosted content for \(product)")
        case 408, 429, 500...599:
            throw KakinError(.network, "the content server answered \(response.status)")
        default:
            throw KakinError(.downloadFailed, "the content server answered \(response.status)")
        }
        try store.save(job.record)
        job.sessionBytes += Int64(response.body.count)
        job.timeRemaining = estimate(job)
        jobs[id] = job
        emit(id)
    }

    /// Drops the partial data and starts again from byte zero (at most a few times in a row).
    private func restart(_ job: inout Job) throws(KakinError) {
        job.restarts += 1
        guard job.restarts <= 3 else {
            throw KakinError(.downloadFailed, "the content of \(job.record.productID) keeps changing", isRetryable: true)
        }
        job.record.restart()
        do { try store.truncate(job.record.id, to: 0) } catch {
            throw KakinError(.storage, "cannot reset the partial download: \(error)", isRetryable: true)
        }
        try store.save(job.record)
        jobs[job.record.id] = job
    }

    /// Takes the package's identity from a response: ETag, SHA-256, size and version.
    private func adopt(_ fields: [String: String], total: Int64?, into record: inout DownloadRecord) {
        record.etag = fields["etag"]
        let tag = fields["etag"].map { $0.replacingOccurrences(of: "W/", with: "").trimmingCharacters(in: ["\""]) }
        let hash = fields["x-content-sha256"] ?? tag
        record.expectedSHA256 = hash.map { $0.lowercased() }.flatMap { $0.count == 64 ? $0 : nil }
        record.contentLength = total
        record.contentVersion = fields["x-content-version"]
    }

    /// Seconds left at this run's average throughput, or unknown.
    private func estimate(_ job: Job) -> TimeInterval {
        guard let start = job.sessionStart, let total = job.record.contentLength, job.sessionBytes > 0 else {
            return ContentDownload.timeRemainingUnknown
        }
        let elapsed = clock().timeIntervalSince(start)
        guard elapsed > 0 else { return ContentDownload.timeRemainingUnknown }
        return Double(max(0, total - job.record.bytesReceived)) / (Double(job.sessionBytes) / elapsed)
    }

    /// Verifies and unpacks the package away from the actor, then reports the result.
    private func finish(_ id: String, run: Int) async {
        guard var job = jobs[id] else { return }
        job.finishing = true
        jobs[id] = job
        let store = self.store
        let record = job.record
        let result = await Task.detached { () -> Result<(url: URL, version: String), KakinError> in
            do throws(KakinError) { return .success(try store.install(record)) } catch { return .failure(error) }
        }.value
        guard var job = jobs[id], job.run == run else { return }
        job.finishing = false
        jobs[id] = job
        switch result {
        case .success(let installed):
            job.state = .finished
            job.contentURL = installed.url
            job.record.contentVersion = installed.version
            job.timeRemaining = 0
            jobs[id] = job
            settle(id)
            schedule()
        case .failure(let error):
            fail(id, error)
        }
    }

    /// Marks the download failed; data of a download that cannot be retried is deleted.
    @discardableResult
    private func fail(_ id: String, _ error: KakinError) -> ContentDownload {
        if var job = jobs[id] {
            job.state = .failed
            job.error = error
            job.run += 1
            job.finishing = false
            job.timeRemaining = ContentDownload.timeRemainingUnknown
            if !error.isRetryable {
                store.remove(id)
                job.record.restart()
            }
            jobs[id] = job
        }
        settle(id)
        schedule()
        return snapshot(id)!
    }

    /// Reports a state the download rests in and wakes whoever waits for it.
    private func settle(_ id: String) {
        emit(id)
        let current = snapshot(id)
        for waiter in waiters.removeValue(forKey: id) ?? [] { waiter.resume(returning: current) }
    }

    private func emit(_ id: String) {
        guard let download = snapshot(id) else { return }
        for continuation in subscribers.values { continuation.yield(DownloadEvent(download: download)) }
    }

    private func unsubscribe(_ key: UUID) { subscribers[key] = nil }

    private func snapshot(_ id: String) -> ContentDownload? {
        guard let job = jobs[id] else { return nil }
        let record = job.record
        let finished = job.state == .finished
        let progress: Float =
            finished ? 1 : record.contentLength.map { $0 > 0 ? Float(record.bytesReceived) / Float($0) : 0 } ?? 0
        return ContentDownload(
            id: record.id, productID: record.productID, transactionID: record.transactionID, state: job.state,
            contentLength: record.contentLength, bytesReceived: record.bytesReceived, progress: min(1, progress),
            timeRemaining: job.timeRemaining, contentVersion: record.contentVersion, contentURL: job.contentURL,
            error: job.error)
    }
}

/// A parsed `Content-Range: bytes first-last/total` (total may be `*`), or `bytes */total`.
private struct ContentRange {
    var first: Int64
    var last: Int64
    var total: Int64?

    init?(_ header: String?) {
        guard let header, header.hasPrefix("bytes ") else { return nil }
        let parts = header.dropFirst("bytes ".count).split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        total = Int64(parts[1])
        if parts[0] == "*" {
            first = -1
            last = -2
            return
        }
        let bounds = parts[0].split(separator: "-", maxSplits: 1)
        guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]), last >= first else {
            return nil
        }
        self.first = first
        self.last = last
    }
}
