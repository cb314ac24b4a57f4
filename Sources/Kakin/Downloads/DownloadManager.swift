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
/// Finish the transaction that granted the content only once its download has finished. Use one
/// manager per folder at a time.
public actor DownloadManager {
    struct Job {
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

    let store: DownloadStore
    private let transport: any DownloadTransport
    private let chunkSize: Int64
    private let maxConcurrentDownloads: Int
    let clock: @Sendable () -> Date
    var jobs: [String: Job] = [:]
    private var order: [String] = []
    var subscribers: [UUID: AsyncStream<DownloadEvent>.Continuation] = [:]
    var waiters: [String: [CheckedContinuation<ContentDownload?, Never>]] = [:]

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
    /// paused, or failed in a way that can be retried, that one is resumed and returned instead,
    /// with `request`'s headers from then on (a fresh customer token replaces an expired one).
    @discardableResult
    public func start(_ request: ContentRequest) -> ContentDownload {
        let current = order.compactMap { jobs[$0] }.first {
            $0.record.productID == request.productID
                && (!$0.state.isTerminal || ($0.state == .failed && $0.error?.isRetryable == true))
        }
        if let current {
            if current.record.headers != request.headers, var job = jobs[current.record.id] {
                job.record.headers = request.headers
                jobs[current.record.id] = job
                try? store.save(job.record)
            }
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
    func schedule() {
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
