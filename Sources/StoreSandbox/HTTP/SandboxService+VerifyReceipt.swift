import AppStoreModels
import Foundation
import Hummingbird

/// `verifyReceipt` as Apple serves it: `POST /verifyReceipt` answers as the sandbox host, and
/// `POST /production/verifyReceipt` as the production host (21007 for every sandbox receipt), so a
/// client can test its production-to-sandbox fallback. HTTP 200 always, with the status in the body.
extension SandboxService {
    func addVerifyReceiptRoutes(to router: Router<SandboxRequestContext>) {
        router.post("verifyReceipt") { request, _ in await verifyReceipt(request, endpoint: .sandbox) }
        router.post("production/verifyReceipt") { request, _ in await verifyReceipt(request, endpoint: .production) }
    }

    private func verifyReceipt(_ request: Request, endpoint: SandboxEngine.VerifyReceiptEndpoint) async -> Response {
        guard let buffer = try? await request.body.collect(upTo: 4 << 20),
            let body = try? JSONDecoder().decode(VerifyReceiptRequest.self, from: Data(buffer: buffer))
        else { return ServiceJSON.response(VerifyReceiptResponse(status: .unreadableRequest)) }
        return ServiceJSON.response(
            await engine.verifyReceipt(body, endpoint: endpoint, sharedSecret: configuration.sharedSecret))
    }
}
