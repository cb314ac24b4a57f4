import AppStoreModels
import Foundation
import Hummingbird

/// The Retention Messaging API, as Apple serves it under `/inApps/v1/messaging` (bearer tokens,
/// request limits and error bodies as for the App Store Server API), and the control routes that
/// play a tester opening the page where they may cancel.
extension SandboxService {
    func addRetentionAPIRoutes(to router: Router<SandboxRequestContext>) {
        let api = router.group("inApps/v1/messaging")
        let app = engine.signer.bundleID
        api.put("image/:id") { request, context in
            await apple(request, .uploadImage) {
                let id = try Self.identifier(context)
                let size = request.uri.queryParameters.get("imageSize").map(RetentionImageSize.init(rawValue:))
                let png: ByteBuffer
                do { png = try await request.body.collect(upTo: 32 << 20) } catch {
                    throw AppleAPIFailure(.invalidImage, "The image is too large.")
                }
                try await retention.uploadImage(id, png: Data(buffer: png), size: size, bundleID: app)
                return Response(status: .ok)
            }
        }
        api.get("image/list") { request, _ in
            await apple(request, .getImageList) { ServiceJSON.response(await retention.imageList(bundleID: app)) }
        }
        api.delete("image/:id") { request, context in
            await apple(request, .deleteImage) {
                try await retention.deleteImage(try Self.identifier(context), bundleID: app)
                return Response(status: .ok)
            }
        }
        api.put("message/:id") { request, context in
            await apple(request, .uploadMessage) {
                let id = try Self.identifier(context)
                let body = try await Self.appleBody(UploadMessageRequestBody.self, request)
                try await retention.uploadMessage(id, body, bundleID: app)
                return Response(status: .ok)
            }
        }
        api.get("message/list") { request, _ in
            await apple(request, .getMessageList) { ServiceJSON.response(await retention.messageList(bundleID: app)) }
        }
        api.delete("message/:id") { request, context in
            await apple(request, .deleteMessage) {
                try await retention.deleteMessage(try Self.identifier(context), bundleID: app)
                return Response(status: .ok)
            }
        }
        api.put("default/:product/:locale") { request, context in
            await apple(request, .configureDefaultMessage) {
                let body = try await Self.appleBody(DefaultConfigurationRequest.self, request)
                try await retention.configureDefaultMessage(
                    productID: try context.parameters.require("product"),
                    locale: try context.parameters.require("locale"), body, bundleID: app)
                return Response(status: .ok)
            }
        }
        api.get("default/:product/:locale") { request, context in
            await apple(request, .getDefaultMessage) {
                ServiceJSON.response(
                    try await retention.defaultMessage(
                        productID: try context.parameters.require("product"),
                        locale: try context.parameters.require("locale"), bundleID: app))
            }
        }
        api.delete("default/:product/:locale") { request, context in
            await apple(request, .deleteDefaultMessage) {
                try await retention.deleteDefaultMessage(
                    productID: try context.parameters.require("product"),
                    locale: try context.parameters.require("locale"), bundleID: app)
                return Response(status: .ok)
            }
        }
        api.put("realtime/url") { request, _ in
            await apple(request, .configureRealtimeURL) {
                let body = try await Self.appleBody(RealtimeURLRequest.self, request)
                try await retention.configureRealtimeURL(body, bundleID: app)
                return Response(status: .ok)
            }
        }
        api.get("realtime/url") { request, _ in
            await apple(request, .getRealtimeURL) {
                let url = try await retention.configuredRealtimeURL(bundleID: app)
                return ServiceJSON.response(RealtimeURLResponse(realtimeURL: url.absoluteString))
            }
        }
        api.delete("realtime/url") { request, _ in
            await apple(request, .deleteRealtimeURL) {
                try await retention.deleteRealtimeURL(bundleID: app)
                return Response(status: .ok)
            }
        }
        api.post("performanceTest") { request, _ in
            await apple(request, .initiatePerformanceTest) {
                let body: PerformanceTestRequest
                do { body = try await Self.appleBody(PerformanceTestRequest.self, request) } catch {
                    throw AppleAPIFailure(.invalidPerformanceTestRequest, "Invalid performance test request.")
                }
                return ServiceJSON.response(try await retention.initiatePerformanceTest(body, bundleID: app))
            }
        }
        api.get("performanceTest/result/:id") { request, context in
            await apple(request, .getPerformanceTestResults) {
                let id = try context.parameters.require("id")
                guard let uuid = UUID(uuidString: id) else {
                    throw AppleAPIFailure(.invalidRequestID, "Invalid request id.")
                }
                guard
                    let result = await retention.performanceTestResult(uuid.uuidString.lowercased(), bundleID: app)
                else { throw AppleAPIFailure(.performanceTestRunNotFound, "Performance test run not found.") }
                return ServiceJSON.response(result)
            }
        }
    }

    /// The `:id` of the path: a UUID (lowercased), as Apple requires of message and image
    /// identifiers.
    private static func identifier(_ context: SandboxRequestContext) throws -> String {
        guard let uuid = UUID(uuidString: try context.parameters.require("id")) else {
            throw AppleAPIFailure(.generalBadRequest, "The identifier must be a UUID.")
        }
        return uuid.uuidString.lowercased()
    }

    /// A JSON body; an unreadable one is Apple's `GeneralBadRequest`.
    private static func appleBody<T: Decodable>(_ type: T.Type, _ request: Request) async throws -> T {
        do { return try await ServiceJSON.decode(type, from: request) } catch {
            throw AppleAPIFailure(.generalBadRequest, "Invalid request body.")
        }
    }
}

extension SandboxService {
    struct CancelPageBody: Codable, Sendable {
        var originalTransactionID: String
        var locale: String?

        enum CodingKeys: String, CodingKey {
            case originalTransactionID = "originalTransactionId"
            case locale
        }
    }

    struct RetentionRequestsResponse: Codable, Sendable {
        var requests: [RetentionRequestRecord]
    }

    struct ReviewStateBody: Codable, Sendable {
        var state: RetentionReviewState
    }

    /// `POST retention/cancel-page` (a tester opens the cancel page: the request is sent and its
    /// record answered), `GET retention/requests` (every request sent, oldest first), and
    /// `PUT retention/messages/:id/state` / `retention/images/:id/state` (Apple's review).
    func addRetentionControlRoutes(to control: RouterGroup<SandboxRequestContext>) {
        control.post("retention/cancel-page") { request, _ in
            await respond {
                let body = try await ServiceJSON.decode(CancelPageBody.self, from: request)
                return ServiceJSON.response(
                    try await retention.openCancelPage(
                        originalTransactionID: body.originalTransactionID, locale: body.locale ?? "en-US"))
            }
        }
        control.get("retention/requests") { _, _ in
            ServiceJSON.response(RetentionRequestsResponse(requests: await retention.requests()))
        }
        for kind in ["messages", "images"] {
            control.put("retention/\(kind)/:id/state") { request, context in
                await respond {
                    let body = try await ServiceJSON.decode(ReviewStateBody.self, from: request)
                    let id = try context.parameters.require("id")
                    let found: Bool
                    if kind == "messages" {
                        found = await retention.setReviewState(message: id, body.state)
                    } else {
                        found = await retention.setReviewState(image: id, body.state)
                    }
                    guard found else { throw SandboxError(.invalidRequest, "no \(kind.dropLast()) has ID \(id)") }
                    return ServiceJSON.response(body)
                }
            }
        }
    }
}
