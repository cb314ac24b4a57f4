import AppStoreModels
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import KakinTestSupport
import StoreSandbox
import Synchronization
import Testing

@testable import KakinServer

/// The waits a client asked for, each moving the sandbox's clock as far.
private final class ClockWaits: Sendable {
    private let list = Mutex<[Duration]>([])
    let clock: SandboxClock
    init(clock: SandboxClock) { self.clock = clock }
    func wait(_ duration: Duration) {
        list.withLock { $0.append(duration) }
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        _ = clock.set(clock.now().addingTimeInterval(seconds))
    }
    var all: [Duration] { list.withLock { $0 } }
}

@Suite("Retention Messaging API client, against the sandbox over HTTP")
struct RetentionMessagingAPIClientTests {
    static let monthly = ExampleApp.productID("premium.monthly")

    /// The sandbox serving the API on a free port, a client holding its key, and the sandbox.
    struct Stack: Sendable {
        let client: RetentionMessagingAPIClient
        let sandbox: SandboxService
        let clock: SandboxClock
        let baseURL: URL
        let key: P256.Signing.PrivateKey
    }

    func withStack(
        rateLimits: SandboxRateLimits? = nil, _ body: @Sendable (Stack) async throws -> Void
    ) async throws {
        let key = P256.Signing.PrivateKey()
        let clock = SandboxClock.manual(at: ServerFixture.start)
        let catalog = try ExampleApp.catalog()
        let engine = try ExampleSandbox.engine(catalog: catalog, authority: ServerFixture.authority, clock: clock)
        let retention = SandboxRetention(
            engine: engine, timing: .stepping(.milliseconds(2)),
            configuration: .init(
                performanceTest: PerformanceTestConfig(
                    maxConcurrentRequests: 2, totalRequests: 6, totalDuration: 60_000, responseTimeThreshold: 700,
                    successRateThreshold: 95)))
        let sandbox = SandboxService(
            engine: engine, catalog: catalog,
            configuration: .init(
                apiKeys: [.init(keyID: "KEY", issuerID: "issuer", publicKey: key.publicKey)], rateLimits: rateLimits),
            retention: retention)
        let app = Application(router: sandbox.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { http in
            let port = try #require(http.port)
            let baseURL = URL(string: "http://127.0.0.1:\(port)")!
            let access = ServerAPIAccess(baseURL: baseURL, keyID: "KEY", issuerID: "issuer", privateKey: key)
            let client = RetentionMessagingAPIClient(
                access: access, exchange: URLSessionExchange(), bundleID: ExampleApp.bundleID, now: { clock.now() })
            try await body(Stack(client: client, sandbox: sandbox, clock: clock, baseURL: baseURL, key: key))
        }
    }

    /// Expects `body` to throw a server error with `code` and Apple's `apple` code.
    func expectRefusal(
        _ code: ServerError.Code, _ apple: APIErrorCode?, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () async throws -> Void
    ) async {
        do {
            try await body()
            Issue.record("expected \(code) \(apple?.rawValue ?? 0)", sourceLocation: sourceLocation)
        } catch let error as ServerError {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
            #expect(error.appleStatus == apple?.rawValue, "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func imagesUploadListAndDelete() async throws {
        try await withStack { stack in
            let client = stack.client
            let image = UUID()
            try await client.uploadImage(image, png: RetentionTesting.png(), size: .fullSize, environment: .sandbox)
            let list = try await client.imageList(environment: .sandbox)
            #expect(
                list.imageIdentifiers == [
                    .init(imageIdentifier: image.uuidString.lowercased(), imageState: .approved, imageSize: .fullSize)
                ])
            await expectRefusal(.conflict, .imageAlreadyExists) {
                try await client.uploadImage(image, png: RetentionTesting.png(), environment: .sandbox)
            }
            await expectRefusal(.invalidRequest, .invalidImage) {
                try await client.uploadImage(UUID(), png: Data("GIF89a".utf8), environment: .sandbox)
            }
            await expectRefusal(.invalidRequest, .invalidImage) {
                try await client.uploadImage(UUID(), png: RetentionTesting.png(alpha: true), environment: .sandbox)
            }
            await expectRefusal(.invalidRequest, .invalidImageSize) {
                try await client.uploadImage(
                    UUID(), png: RetentionTesting.png(), size: RetentionImageSize("HUGE"), environment: .sandbox)
            }
            try await client.uploadImage(
                UUID(), png: RetentionTesting.png(width: 96, height: 96, alpha: true), size: .bulletPoint,
                environment: .sandbox)
            try await client.deleteImage(image, environment: .sandbox)
            await expectRefusal(.notFound, .imageNotFound) {
                try await client.deleteImage(image, environment: .sandbox)
            }
            #expect(try await client.imageList(environment: .sandbox).imageIdentifiers?.count == 1)
        }
    }

    @Test func messagesUploadListAndDeleteAsAppleChecksThem() async throws {
        try await withStack { stack in
            let client = stack.client
            let image = UUID()
            let message = UUID()
            try await client.uploadImage(image, png: RetentionTesting.png(), environment: .sandbox)
            let body = UploadMessageRequestBody(
                header: "Before you go", body: "Three months at half price.",
                image: UploadMessageImage(imageIdentifier: image.uuidString.lowercased(), altText: "A flame"),
                headerPosition: .aboveImage)
            try await client.uploadMessage(message, body, environment: .sandbox)
            #expect(
                try await client.messageList(environment: .sandbox).messageIdentifiers == [
                    .init(messageIdentifier: message.uuidString.lowercased(), messageState: .approved)
                ])
            #expect(await stack.sandbox.retention.message(message.uuidString) == body)
            await expectRefusal(.conflict, .messageAlreadyExists) {
                try await client.uploadMessage(message, body, environment: .sandbox)
            }
            let refusals: [(UploadMessageRequestBody, ServerError.Code, APIErrorCode)] = [
                (.init(header: String(repeating: "h", count: 67), body: "b"), .invalidRequest, .headerTooLong),
                (.init(header: "h", body: String(repeating: "b", count: 145)), .invalidRequest, .bodyTooLong),
                (
                    .init(header: "h", body: "b", headerPosition: .aboveImage), .invalidRequest,
                    .headerAboveImageRequiresImage
                ),
                (
                    .init(
                        header: "h", body: "b",
                        image: .init(imageIdentifier: image.uuidString, altText: String(repeating: "a", count: 151))),
                    .invalidRequest, .altTextTooLong
                ),
                (
                    .init(header: "h", body: "b", image: .init(imageIdentifier: UUID().uuidString, altText: "a")),
                    .notFound, .imageNotFound
                ),
                (
                    .init(
                        header: "h", body: "b",
                        bulletPoints: Array(
                            repeating: .init(text: "t", imageIdentifier: image.uuidString, altText: "a"), count: 6)),
                    .invalidRequest, .tooManyBulletPoints
                ),
            ]
            for (refused, code, apple) in refusals {
                await expectRefusal(code, apple) {
                    try await client.uploadMessage(UUID(), refused, environment: .sandbox)
                }
            }
            await expectRefusal(.forbidden, .imageInUse) { try await client.deleteImage(image, environment: .sandbox) }
            try await client.deleteMessage(message, environment: .sandbox)
            await expectRefusal(.notFound, .messageNotFound) {
                try await client.deleteMessage(message, environment: .sandbox)
            }
            #expect(try await client.messageList(environment: .sandbox).messageIdentifiers == [])
            try await client.deleteImage(image, environment: .sandbox)
        }
    }

    @Test func defaultMessagesPerProductAndLocale() async throws {
        try await withStack { stack in
            let client = stack.client
            let message = UUID()
            try await client.uploadMessage(
                message, .init(header: "Stay", body: "Every feature stays."), environment: .sandbox)
            await expectRefusal(.notFound, .defaultMessageNotFound) {
                _ = try await client.defaultMessage(productID: Self.monthly, locale: "en-US", environment: .sandbox)
            }
            try await client.configureDefaultMessage(
                productID: Self.monthly, locale: "en-US", messageIdentifier: message, environment: .sandbox)
            let configured = try await client.defaultMessage(
                productID: Self.monthly, locale: "en-US", environment: .sandbox)
            #expect(configured.messageIdentifier == message.uuidString.lowercased())
            await expectRefusal(.invalidRequest, .invalidLocale) {
                try await client.configureDefaultMessage(
                    productID: Self.monthly, locale: "english", messageIdentifier: message, environment: .sandbox)
            }
            await expectRefusal(.notFound, .messageNotFound) {
                try await client.configureDefaultMessage(
                    productID: Self.monthly, locale: "ja-JP", messageIdentifier: UUID(), environment: .sandbox)
            }
            #expect(await stack.sandbox.retention.setReviewState(message: message.uuidString, .pending))
            await expectRefusal(.forbidden, .messageNotApproved) {
                try await client.configureDefaultMessage(
                    productID: Self.monthly, locale: "ja-JP", messageIdentifier: message, environment: .sandbox)
            }
            try await client.deleteDefaultMessage(productID: Self.monthly, locale: "en-US", environment: .sandbox)
            await expectRefusal(.notFound, .defaultMessageNotFound) {
                try await client.deleteDefaultMessage(productID: Self.monthly, locale: "en-US", environment: .sandbox)
            }
        }
    }

    @Test func theRealtimeURLAndThePerformanceTest() async throws {
        try await withStack { stack in
            let client = stack.client
            await expectRefusal(.notFound, .realtimeURLNotFound) {
                _ = try await client.realtimeURL(environment: .sandbox)
            }
            await expectRefusal(.notFound, .realtimeURLNotFound) {
                _ = try await client.initiatePerformanceTest(originalTransactionID: "1")
            }
            let message = UUID()
            try await client.uploadMessage(message, .init(header: "Stay", body: "b"), environment: .sandbox)
            let tester = try await stack.sandbox.engine.createTester(name: "retention@example.com")
            let outcome = try await stack.sandbox.engine.purchase(.init(testerID: tester.id, productID: Self.monthly))
            guard case .purchased(let subscription) = outcome else {
                Issue.record("the subscription was not bought: \(outcome)")
                return
            }
            let verifier = try stack.sandbox.engine.signer.makeVerifier()
            try await RetentionTesting.withEndpoint(answer: { jws in
                guard (try? await verifier.verifyRealtimeRequest(jws)) != nil else { return (401, Data()) }
                return (200, RetentionTesting.answer(message.uuidString.lowercased()))
            }) { url in
                await expectRefusal(.invalidRequest, .invalidRealtimeURL) {
                    try await client.configureRealtimeURL(URL(string: "ftp://example.com/x")!, environment: .sandbox)
                }
                try await client.configureRealtimeURL(url, environment: .sandbox)
                #expect(try await client.realtimeURL(environment: .sandbox).realtimeURL == url.absoluteString)

                await expectRefusal(.invalidRequest, .invalidTransactionID) {
                    _ = try await client.initiatePerformanceTest(originalTransactionID: "abc")
                }
                await expectRefusal(.invalidRequest, .invalidPerformanceTestRequest) {
                    _ = try await client.initiatePerformanceTest(originalTransactionID: "999999999")
                }
                let started = try await client.initiatePerformanceTest(originalTransactionID: subscription.originalID)
                #expect(started.config?.totalRequests == 6)
                let requestID = try #require(started.requestID)
                await stack.sandbox.retention.waitForPerformanceTest(requestID)
                let result = try await client.performanceTestResult(requestID: requestID)
                #expect(result.result == .pass)
                #expect(result.successRate == 100)
                #expect(result.target == url.absoluteString)
                await expectRefusal(.notFound, .performanceTestRunNotFound) {
                    _ = try await client.performanceTestResult(requestID: UUID().uuidString)
                }
                await expectRefusal(.invalidRequest, .invalidRequestID) {
                    _ = try await client.performanceTestResult(requestID: "not-a-uuid")
                }
                // A tester opening the cancel page through the control API sees the server's choice.
                let record = try await stack.sandbox.retention.openCancelPage(
                    originalTransactionID: subscription.originalID)
                #expect(record.answeredInTime)
                #expect(record.shownMessageIdentifier == message.uuidString.lowercased())
            }
            try await client.deleteRealtimeURL(environment: .sandbox)
            await expectRefusal(.notFound, .realtimeURLNotFound) {
                try await client.deleteRealtimeURL(environment: .sandbox)
            }
        }
    }

    @Test func aBadKeyIsAConfigurationError() async throws {
        try await withStack { stack in
            let access = ServerAPIAccess(
                baseURL: stack.baseURL, keyID: "KEY", issuerID: "issuer", privateKey: P256.Signing.PrivateKey())
            let stranger = RetentionMessagingAPIClient(
                access: access, exchange: URLSessionExchange(), bundleID: ExampleApp.bundleID)
            await expectRefusal(.invalidConfiguration, nil) {
                _ = try await stranger.messageList(environment: .sandbox)
            }
        }
    }

    @Test func aRateLimitedRequestIsSentAgainAfterRetryAfter() async throws {
        let limits = SandboxRateLimits(requests: [.getMessageList: 1], window: .seconds(60))
        try await withStack(rateLimits: limits) { stack in
            let waits = ClockWaits(clock: stack.clock)
            var client = stack.client
            client.pause = { waits.wait($0) }
            client.longestWait = .seconds(120)
            _ = try await client.messageList(environment: .sandbox)
            _ = try await client.messageList(environment: .sandbox)
            #expect(waits.all.count == 1, "the second request waited for the window to end, once")

            // A client that may not wait gets Apple's refusal, retryable, with the time to wait.
            client.attempts = 1
            await #expect {
                _ = try await client.messageList(environment: .sandbox)
            } throws: { error in
                guard let error = error as? ServerError else { return false }
                return error.code == .appleUnavailable && error.isRetryable
                    && error.appleStatus == APIErrorCode.rateLimitExceeded.rawValue && error.retryAfterSeconds != nil
            }
        }
    }
}
