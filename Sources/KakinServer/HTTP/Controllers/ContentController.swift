import AppStoreModels
import Crypto
import Foundation
import KakinLedger
import HTTPTypes
import Hummingbird
import KakinWire
import KakinHTTP

/// Hosted content: packages uploaded by the app's backend (secret key), downloaded by customers
/// whose purchase grants them (publishable key).
struct ContentController: RouteController {
    let service: PurchaseService
    /// The largest content package accepted.
    let maxContentSize: Int

    struct ContentUploadResponse: Encodable {
        var productId: String
        var version: String
        var sha256: String
        var size: Int64
    }

    func addRoutes(to routes: inout RouteTable) {
        // Admin upload: the raw package bytes; a new version is kept beside the old ones.
        routes.on(.uploadContent()) { request, context in
            let caller = try context.caller(secret: true)
            let app = try caller.app(try RequestReader.bundleID(request), in: service)
            let productID = try Self.contentProduct(context, of: app, in: service)
            guard let version = request.uri.queryParameters.get("version"), !version.isEmpty, version.count <= 64 else {
                throw ServerError(.invalidRequest, "?version= (1 to 64 characters) is required")
            }
            let buffer: ByteBuffer
            do { buffer = try await request.body.collect(upTo: maxContentSize) } catch {
                throw ServerError(.payloadTooLarge, "the package is larger than \(maxContentSize) bytes")
            }
            let bytes = Data(buffer: buffer)
            let digest = SHA256.hash(data: bytes).hexDigits
            try await service.putContent(
                ContentPackage(
                    bundleID: app.bundleID, productID: productID, version: version, sha256: digest,
                    size: Int64(bytes.count), uploadedAt: service.now()),
                bytes: bytes)
            return JSONBody.response(
                ContentUploadResponse(productId: productID, version: version, sha256: digest, size: Int64(bytes.count)),
                status: .created)
        }
        // Download: only for a customer whose purchase of the product grants its content.
        routes.on(.content()) { request, context in
            let caller = try context.caller(secret: false)
            let app = try caller.app(try RequestReader.bundleID(request), in: service)
            guard let user = request.uri.queryParameters.get("appUserId") else {
                throw ServerError(.invalidRequest, "?appUserId= is required")
            }
            let customer = try await caller.customer(user, of: app, request: request, service: service)
            let productID = try Self.contentProduct(context, of: app, in: service)
            let (summary, entitlements) = try await service.customerSummary(
                bundleID: app.bundleID, appUserID: customer, recent: 0, withJWS: false)
            // A parent's withdrawal of consent withholds hosted content too.
            if entitlements.contains(where: { $0.consentRescindedDate != nil }) {
                throw ServerError(
                    .notEntitled, "a parent withdrew consent for \(user): access is withheld", cause: "consentRescinded")
            }
            guard try await service.hasAccess(to: productID, in: summary, app: app) else {
                throw ServerError(.notEntitled, "\(user) does not own \(productID)")
            }
            guard
                let (package, bytes) = try await service.latestContent(
                    bundleID: app.bundleID, productID: productID)
            else { throw ServerError(.notFound, "no package has been uploaded for \(productID)") }
            var response = RangedDownload.response(bytes, request: request, contentType: "application/octet-stream")
            response.headers[HTTPField.Name("X-Content-Version")!] = package.version
            response.headers[HTTPField.Name("X-Content-SHA256")!] = package.sha256
            return response
        }
    }

    /// The product a content route names: a valid product ID (letters, digits, `_` and `.`,
    /// as App Store Connect allows), of the app's catalog when it has one, whose grants include
    /// hosted content. Anything else is refused before it reaches storage: 400 for an ID no
    /// product can have, 404 for a product that is not there or carries no content.
    static func contentProduct(
        _ context: KakinRequestContext, of app: AppConfiguration, in service: PurchaseService
    ) throws(ServerError) -> String {
        let productID = try RequestReader.pathParameter(context, "product")
        guard StoreKitConfigurationLint.isValidProductID(productID), productID.count <= 255 else {
            throw ServerError(
                .invalidRequest, "a product ID has 1 to 255 letters, digits, underscores and periods",
                cause: "invalidProductID")
        }
        let catalog = app.productTypes ?? service.productTypes
        guard catalog.isEmpty || catalog[productID] != nil else {
            throw ServerError(.notFound, "\(productID) is not a product of \(app.bundleID)'s catalog")
        }
        guard service.grants(for: productID, of: app).contains(.content) else {
            throw ServerError(.notFound, "\(productID) has no hosted content")
        }
        return productID
    }
}
