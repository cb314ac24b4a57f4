import Foundation
import KakinWire

extension DownloadManager {
    /// Folds one answer into the download: new bytes, a restart, or an error.
    func apply(
        _ response: (status: Int, headers: [String: String], body: Data), to id: String, offset: Int64
    ) throws(KakinError) {
        guard var job = jobs[id] else { return }
        let fields = Dictionary(response.headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
        let product = job.record.productID
        switch response.status {
        case 206:
            guard let range = ContentRange(fields["content-range"]), range.first == offset,
                Int64(response.body.count) == range.last - range.first + 1
            else {
                throw KakinError(.downloadFailed, "the server sent the wrong part of \(product)", isRetryable: true)
            }
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
            // A customer token expires: one refused now passes once the download is started again
            // with a fresh one (the outbox does, for a transaction that waits for its content).
            let cause = try? KakinJSON.decoder().decode(ErrorAnswer.self, from: response.body).error.cause
            if let cause, cause.hasPrefix("customerToken") {
                throw KakinError(
                    .downloadFailed, "the content server refused the customer token for \(product) (\(cause))",
                    isRetryable: true, serverCode: "unauthorized", cause: cause)
            }
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
            throw KakinError(
                .downloadFailed, "the content of \(job.record.productID) keeps changing", isRetryable: true)
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
    func finish(_ id: String, run: Int) async {
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
    func fail(_ id: String, _ error: KakinError) -> ContentDownload {
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
    func settle(_ id: String) {
        emit(id)
        let current = snapshot(id)
        for waiter in waiters.removeValue(forKey: id) ?? [] { waiter.resume(returning: current) }
    }

    func emit(_ id: String) {
        guard let download = snapshot(id) else { return }
        for continuation in subscribers.values { continuation.yield(DownloadEvent(download: download)) }
    }

    func unsubscribe(_ key: UUID) { subscribers[key] = nil }

    func snapshot(_ id: String) -> ContentDownload? {
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
