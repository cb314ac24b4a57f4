public import AppStoreModels
public import Foundation

/// Apple's side of Retention Messaging in the sandbox: the messages, images, default messages and
/// real-time URL each app uploads through the Retention Messaging API, the `Get Retention Message`
/// requests sent when a tester opens the page where they may cancel, and the performance test.
///
/// Like Apple's sandbox environment, uploads are approved at once (``Configuration/reviewState``
/// changes that, and ``setReviewState(message:_:)`` moves one later). What is uploaded is kept in
/// memory, and on disk after ``keepUploads(in:)`` (`kakin serve` and `kakin sandbox run --data`
/// keep it in their data directories); the requests sent and the performance tests run are
/// kept in memory only.
public actor SandboxRetention {
    /// Settings.
    public struct Configuration: Sendable {
        /// The review state an upload gets: approved, as in Apple's sandbox environment.
        public var reviewState: RetentionReviewState
        /// How the sandbox's performance test runs. Apple does not publish its figures; the
        /// sandbox's are ``defaultPerformanceTest``.
        public var performanceTest: PerformanceTestConfig
        /// How long a real-time request may take: `RetentionMessaging/realtimeResponseLimit`.
        public var responseLimit: Duration
        /// The real-time URL the sandbox's app starts with, as if configured through the API
        /// (`kakin serve` names its own server's endpoint); none by default.
        public var realtimeURL: URL?

        /// The sandbox's performance test: 100 requests, 10 at a time, within 60 seconds, each
        /// answered within 700 ms, 95 % needed to pass.
        public static let defaultPerformanceTest = PerformanceTestConfig(
            maxConcurrentRequests: 10, totalRequests: 100, totalDuration: 60_000, responseTimeThreshold: 700,
            successRateThreshold: 95)

        /// Settings from their parts; Apple's behaviour by default.
        public init(
            reviewState: RetentionReviewState = .approved,
            performanceTest: PerformanceTestConfig = Configuration.defaultPerformanceTest,
            responseLimit: Duration = RetentionMessaging.realtimeResponseLimit, realtimeURL: URL? = nil
        ) {
            self.reviewState = reviewState
            self.performanceTest = performanceTest
            self.responseLimit = responseLimit
            self.realtimeURL = realtimeURL
        }
    }

    struct StoredMessage: Sendable {
        var body: UploadMessageRequestBody
        var state: RetentionReviewState
        var sequence: Int
    }

    struct StoredImage: Sendable {
        var png: Data
        var size: RetentionImageSize?
        var state: RetentionReviewState
        var sequence: Int
    }

    struct DefaultKey: Hashable, Sendable {
        var productID: String
        var locale: String
    }

    /// One app's uploads and history.
    struct AppState: Sendable {
        var messages: [String: StoredMessage] = [:]
        var images: [String: StoredImage] = [:]
        var defaults: [DefaultKey: String] = [:]
        var realtimeURL: URL?
        var requests: [RetentionRequestRecord] = []
        var performanceTests: [String: PerformanceTestRun] = [:]
    }

    /// The engine whose subscriptions the requests are about and whose signer signs them.
    public nonisolated let engine: SandboxEngine
    /// The settings.
    public nonisolated let configuration: Configuration
    let sender: RetentionSender
    var apps: [String: AppState] = [:]
    var sequence = 0
    var runningTests: [String: Task<Void, Never>] = [:]
    /// Where the uploads are written at each change (``keepUploads(in:)``); `nil` keeps them in
    /// memory only.
    var uploadsFile: URL?

    /// Creates the sandbox's retention side for `engine`'s app, sending requests over `transport`
    /// and timing them with `timing`.
    public init(
        engine: SandboxEngine, transport: any RetentionRequestTransport = URLSessionRetentionTransport(),
        timing: RetentionTiming = .live, configuration: Configuration = Configuration()
    ) {
        self.engine = engine
        self.configuration = configuration
        sender = RetentionSender(transport: transport, timing: timing)
        if let url = configuration.realtimeURL {
            apps[engine.signer.bundleID] = AppState(realtimeURL: url)
        }
    }

    /// The app the sandbox signs for.
    nonisolated var bundleID: String { engine.signer.bundleID }

    func nextSequence() -> Int {
        sequence += 1
        return sequence
    }

    // MARK: - Reading

    /// Every message `bundleID` uploaded (the sandbox's app by default), oldest first, with its state.
    public func messageList(bundleID: String? = nil) -> GetMessageListResponse {
        let app = apps[bundleID ?? self.bundleID] ?? AppState()
        return GetMessageListResponse(
            messageIdentifiers: app.messages.sorted { $0.value.sequence < $1.value.sequence }.map {
                GetMessageListResponseItem(messageIdentifier: $0.key, messageState: $0.value.state)
            })
    }

    /// Every image `bundleID` uploaded, oldest first, with its state and size.
    public func imageList(bundleID: String? = nil) -> GetImageListResponse {
        let app = apps[bundleID ?? self.bundleID] ?? AppState()
        return GetImageListResponse(
            imageIdentifiers: app.images.sorted { $0.value.sequence < $1.value.sequence }.map {
                GetImageListResponseItem(imageIdentifier: $0.key, imageState: $0.value.state, imageSize: $0.value.size)
            })
    }

    /// The text of an uploaded message, for a preview.
    public func message(_ identifier: String, bundleID: String? = nil) -> UploadMessageRequestBody? {
        apps[bundleID ?? self.bundleID]?.messages[identifier.lowercased()]?.body
    }

    /// The configured real-time URL.
    public func realtimeURL(bundleID: String? = nil) -> URL? {
        apps[bundleID ?? self.bundleID]?.realtimeURL
    }

    /// Every `Get Retention Message` request sent for `bundleID`'s cancel pages, oldest first.
    public func requests(bundleID: String? = nil) -> [RetentionRequestRecord] {
        apps[bundleID ?? self.bundleID]?.requests ?? []
    }

    /// Moves an uploaded message to `state`, as Apple's review would; `false` when there is none.
    @discardableResult
    public func setReviewState(message identifier: String, _ state: RetentionReviewState) -> Bool {
        guard apps[bundleID]?.messages[identifier.lowercased()] != nil else { return false }
        apps[bundleID]?.messages[identifier.lowercased()]?.state = state
        try? saveUploads()
        return true
    }

    /// Moves an uploaded image to `state`, as Apple's review would; `false` when there is none.
    @discardableResult
    public func setReviewState(image identifier: String, _ state: RetentionReviewState) -> Bool {
        guard apps[bundleID]?.images[identifier.lowercased()] != nil else { return false }
        apps[bundleID]?.images[identifier.lowercased()]?.state = state
        try? saveUploads()
        return true
    }
}
