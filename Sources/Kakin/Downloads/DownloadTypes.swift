public import Foundation
import KakinWire

/// Where a hosted-content download stands, with StoreKit's `SKDownload.State` raw values.
public enum DownloadState: Int, Codable, Hashable, Sendable, CustomStringConvertible {
    /// Queued: it starts when a download slot is free.
    case waiting = 0
    /// Bytes are arriving.
    case active = 1
    /// Stopped by ``DownloadManager/pause(_:)``, or found on disk after the app restarted; resumable.
    case paused = 2
    /// Verified and unpacked: ``ContentDownload/contentURL`` is set.
    case finished = 3
    /// Stopped by an error (``ContentDownload/error``); resumable when the error is retryable.
    case failed = 4
    /// Stopped by ``DownloadManager/cancel(_:)``; its partial data is gone.
    case cancelled = 5

    /// Whether the download has stopped for good (finished, failed or cancelled).
    public var isTerminal: Bool { self == .finished || self == .failed || self == .cancelled }

    /// `waiting`, `active`, … as in StoreKit.
    public var description: String {
        switch self {
        case .waiting: "waiting"
        case .active: "active"
        case .paused: "paused"
        case .finished: "finished"
        case .failed: "failed"
        case .cancelled: "cancelled"
        }
    }
}

/// What to download: a product's hosted content, where it is served, and the headers it needs.
public struct ContentRequest: Hashable, Sendable {
    /// The product whose content this is.
    public var productID: String
    /// Where the package is served; it must answer `Range` requests with `ETag` (see ``DownloadTransport``).
    public var url: URL
    /// Headers sent with every request (for example `X-Kakin-Key`). They are kept on disk with the
    /// partial download so that it can resume after the app restarts.
    public var headers: [String: String]
    /// The transaction that granted the content; finish it once the download has finished.
    public var transactionID: String?

    /// A request for a package at `url`.
    public init(productID: String, url: URL, headers: [String: String] = [:], transactionID: String? = nil) {
        self.productID = productID
        self.url = url
        self.headers = headers
        self.transactionID = transactionID
    }

    /// Content served by the Kakin purchase server:
    /// `GET {server}/v1/content/{productID}?bundleId=…&appUserId=…` with `X-Kakin-Key`, and
    /// `X-Kakin-Customer-Token` when `customerToken` is given (an identified customer of an app
    /// whose server requires customer tokens; ``KakinServerClient/contentRequest(productID:appUserID:)``
    /// gets one from the app's provider).
    public static func purchaseServer(
        _ server: URL, productID: String, bundleID: String, appUserID: String, publishableKey: String,
        transactionID: String? = nil, customerToken: String? = nil
    ) -> ContentRequest {
        let path = server.appendingPathComponent("v1").appendingPathComponent("content")
            .appendingPathComponent(productID)
        var components = URLComponents(url: path, resolvingAgainstBaseURL: false)
        components?.queryItems = [
            URLQueryItem(name: "bundleId", value: bundleID), URLQueryItem(name: "appUserId", value: appUserID),
        ]
        var headers = [KakinHeader.publishableKey: publishableKey]
        if let customerToken { headers[KakinHeader.customerToken] = customerToken }
        return ContentRequest(
            productID: productID, url: components?.url ?? path, headers: headers, transactionID: transactionID)
    }

    /// Content served by the sandbox App Store to one of its testers:
    /// `GET {sandbox}/v1/device/testers/{tester}/content/{productID}`.
    public static func sandbox(
        _ sandbox: URL, testerID: String, productID: String, transactionID: String? = nil
    ) -> ContentRequest {
        let url = sandbox.appendingPathComponent("v1").appendingPathComponent("device")
            .appendingPathComponent("testers").appendingPathComponent(testerID)
            .appendingPathComponent("content").appendingPathComponent(productID)
        return ContentRequest(productID: productID, url: url, transactionID: transactionID)
    }
}

/// A snapshot of one download, the counterpart of StoreKit's `SKDownload`.
public struct ContentDownload: Hashable, Sendable, Identifiable {
    /// `timeRemaining` when it cannot be estimated yet (`SKDownloadTimeRemainingUnknown`).
    public static let timeRemainingUnknown: TimeInterval = -1

    /// Identifies the download in ``DownloadManager``; also the name of its partial file.
    public var id: String
    /// The product whose content this is (`SKDownload.contentIdentifier`).
    public var productID: String
    /// The transaction that granted the content, if the request named one.
    public var transactionID: String?
    /// Where the download stands.
    public var state: DownloadState
    /// The package's size in bytes, once the server has told it.
    public var contentLength: Int64?
    /// Bytes received and kept so far.
    public var bytesReceived: Int64
    /// From 0 to 1, for a progress bar.
    public var progress: Float
    /// Estimated seconds left at the current throughput, or ``timeRemainingUnknown``.
    public var timeRemaining: TimeInterval
    /// The package version the server announced (`X-Content-Version`), or a prefix of its SHA-256.
    public var contentVersion: String?
    /// The folder holding the unpacked content, once finished.
    public var contentURL: URL?
    /// Why the download failed, when it did.
    public var error: KakinError?

    /// A snapshot; the manager makes these, tests and previews may too.
    public init(
        id: String, productID: String, transactionID: String? = nil, state: DownloadState,
        contentLength: Int64? = nil, bytesReceived: Int64 = 0, progress: Float = 0,
        timeRemaining: TimeInterval = ContentDownload.timeRemainingUnknown, contentVersion: String? = nil,
        contentURL: URL? = nil, error: KakinError? = nil
    ) {
        self.id = id
        self.productID = productID
        self.transactionID = transactionID
        self.state = state
        self.contentLength = contentLength
        self.bytesReceived = bytesReceived
        self.progress = progress
        self.timeRemaining = timeRemaining
        self.contentVersion = contentVersion
        self.contentURL = contentURL
        self.error = error
    }
}

/// A change to a download: a new state, or more bytes while active.
public struct DownloadEvent: Hashable, Sendable {
    /// The download after the change.
    public var download: ContentDownload

    /// An event carrying `download`.
    public init(download: ContentDownload) { self.download = download }

    /// The download's ID.
    public var id: String { download.id }
    /// The download's state after the change.
    public var state: DownloadState { download.state }
    /// From 0 to 1.
    public var progress: Float { download.progress }
    /// Seconds left, or ``ContentDownload/timeRemainingUnknown``.
    public var timeRemaining: TimeInterval { download.timeRemaining }
}
