import AppStoreModels
import Foundation
import HTTPTypes
import Hummingbird
import KakinHTTP

/// The device API's offer codes, refund requests, subscription statuses and event stream.
extension SandboxService {
    struct RedeemBody: Codable, Sendable {
        var code: String
    }

    struct RefundRequestResponse: Codable, Sendable {
        /// `success`, as `Transaction.RefundRequestStatus`.
        var status: String
    }

    struct StatusesResponse: Codable, Sendable {
        struct Status: Codable, Sendable {
            /// 1 subscribed, 2 expired, 3 billing retry, 4 grace period, 5 revoked.
            var state: SubscriptionStatus
            var transaction: DeviceTransaction
            var signedRenewalInfo: String
            var renewalInfo: JWSRenewalInfoDecodedPayload
        }
        var statuses: [Status]
    }

    func addStoreKitDeviceRoutes(to device: RouterGroup<SandboxRequestContext>) {
        // The offer code redeem sheet: the code buys its product at the offer's terms.
        device.post("testers/:tester/offer-codes/redeem") { request, context in
            await respond {
                let body = try await ServiceJSON.decode(RedeemBody.self, from: request)
                let outcome = try await engine.redeemOfferCode(
                    body.code, testerID: try context.parameters.require("tester"),
                    definition: catalog.offerCode(body.code))
                return try paymentResponse(outcome)
            }
        }
        // Transaction.beginRefundRequest: the App Store decides later (control API).
        device.post("testers/:tester/transactions/:transaction/refund-request") { _, context in
            await respond {
                try await engine.requestRefund(
                    try context.parameters.require("transaction"), testerID: try context.parameters.require("tester"))
                return ServiceJSON.response(RefundRequestResponse(status: "success"))
            }
        }
        // Product.SubscriptionInfo.status(for: groupID).
        device.get("testers/:tester/subscriptions/:group/status") { _, context in
            await respond {
                let statuses = try await engine.subscriptionStatuses(
                    of: try context.parameters.require("tester"), groupID: try context.parameters.require("group"))
                let now = engine.clock.now()
                return ServiceJSON.response(
                    StatusesResponse(
                        statuses: try statuses.map { status in
                            StatusesResponse.Status(
                                state: status.state, transaction: try sign(status.transaction),
                                signedRenewalInfo: try engine.signer.signRenewalInfo(status.renewalInfo, at: now),
                                renewalInfo: status.renewalInfo)
                        }))
            }
        }
        device.get("testers/:tester/updates/stream") { request, context in
            await respond {
                try await updateStream(testerID: try context.parameters.require("tester"), request: request)
            }
        }
    }

    /// The update stream as server-sent events: one `transaction` event per update, whose `id` is
    /// the update's sequence number and whose `data` is the signed transaction as JSON; a comment
    /// line every `keepalive` seconds (15 by default) while nothing happens. It starts after
    /// `Last-Event-ID` when the client resumes, else after `?after=` (0: from the first update).
    func updateStream(testerID: String, request: Request) async throws -> Response {
        _ = try await engine.tester(testerID)
        let resumeAfter =
            request.headers[HTTPField.Name("Last-Event-ID")!].flatMap { Int($0) }
            ?? request.uri.queryParameters.get("after").flatMap { Int($0) } ?? 0
        let seconds = request.uri.queryParameters.get("keepalive").flatMap { Double($0) } ?? 15
        guard seconds.isFinite, seconds >= 0.01, seconds <= 300 else {
            throw RouteFailure(
                ServiceJSON.error(
                    .badRequest, code: "invalidRequest",
                    message: "keepalive must be 0.01 to 300 seconds, not \(seconds)"))
        }
        let keepAlive = Duration.milliseconds(Int(seconds * 1000))
        let service = self
        let body = ResponseBody { writer in
            // Tells the client how long to wait before reconnecting, and that the stream is open.
            try await writer.write(ByteBuffer(string: "retry: 2000\n: connected\n\n"))
            var last = resumeAfter
            while !Task.isCancelled {
                let entries = try await service.engine.updateEntries(of: testerID, after: last)
                guard !entries.isEmpty else {
                    await service.engine.waitForUpdate(of: testerID, after: last, timeout: keepAlive)
                    if try await service.engine.updateEntries(of: testerID, after: last).isEmpty {
                        try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                    }
                    continue
                }
                var frames = ""
                for entry in entries {
                    let json = String(decoding: JSONBody.encode(try service.sign(entry.transaction)), as: UTF8.self)
                    frames += "event: transaction\nid: \(entry.sequence)\ndata: \(json)\n\n"
                    last = entry.sequence
                }
                try await writer.write(ByteBuffer(string: frames))
            }
            try await writer.finish(nil)
        }
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: body)
    }
}
