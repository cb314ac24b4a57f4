import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import KakinHTTP

extension KakinServerHTTP {
    struct ContentUploadResponse: Encodable {
        var productId: String
        var version: String
        var sha256: String
        var size: Int64
    }

    func addContentRoutes(to router: Router<BasicRequestContext>) {
        // Admin upload: the raw package bytes; a new version is kept beside the old ones.
        router.put("v1/content/:product") { request, context in
            await handle("content-upload") {
                let bundleID = try Self.bundleID(request)
                try authenticate(request, bundleID: bundleID, secret: true)
                guard let version = request.uri.queryParameters.get("version"), !version.isEmpty else {
                    throw ServerError(.invalidRequest, "?version= is required")
                }
                let buffer: ByteBuffer
                do { buffer = try await request.body.collect(upTo: maxContentSize) } catch {
                    throw ServerError(.invalidRequest, "the package is larger than \(maxContentSize) bytes")
                }
                let bytes = Data(buffer: buffer)
                let digest = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
                let productID = try context.parameters.require("product")
                try await service.store.putContent(
                    ContentPackage(
                        bundleID: bundleID, productID: productID, version: version, sha256: digest,
                        size: Int64(bytes.count), uploadedAt: service.now()),
                    bytes: bytes)
                return Self.json(
                    ContentUploadResponse(
                        productId: productID, version: version, sha256: digest, size: Int64(bytes.count)),
                    status: .created)
            }
        }
        // Download: only for a customer whose purchase of the product grants its content.
        router.get("v1/content/:product") { request, context in
            await handle("content") {
                let bundleID = try Self.bundleID(request)
                try authenticate(request, bundleID: bundleID, secret: false)
                guard let user = request.uri.queryParameters.get("appUserId") else {
                    throw ServerError(.invalidRequest, "?appUserId= is required")
                }
                let productID = try context.parameters.require("product")
                guard service.grants.grants(for: productID).contains(.content) else {
                    throw ServerError(.notFound, "\(productID) has no hosted content")
                }
                let customer = try await service.customer(bundleID: bundleID, appUserID: user)
                let now = service.now()
                guard
                    customer.transactions.contains(where: {
                        $0.productID == productID && EntitlementRules.isActive($0, at: now)
                    })
                else { throw ServerError(.notEntitled, "\(user) does not own \(productID)") }
                guard
                    let (package, bytes) = try await service.store.latestContent(
                        bundleID: bundleID, productID: productID)
                else { throw ServerError(.notFound, "no package has been uploaded for \(productID)") }
                var response = RangedDownload.response(bytes, request: request, contentType: "application/octet-stream")
                response.headers[HTTPField.Name("X-Content-Version")!] = package.version
                response.headers[HTTPField.Name("X-Content-SHA256")!] = package.sha256
                return response
            }
        }
    }
}
