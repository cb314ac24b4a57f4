import Crypto
public import Foundation
import SQLKit

extension SQLLedgerStore {
    /// Stores a version of a product's content package.
    ///
    /// The size and SHA-256 must describe `bytes`, which cannot be empty. Versions are immutable:
    /// uploading the same version again with the same bytes does nothing, with other bytes is refused.
    public func putContent(_ package: ContentPackage, bytes: Data) async throws {
        guard !bytes.isEmpty else {
            throw LedgerStoreError(.invalidArgument, "content \(package.productID) \(package.version) is empty")
        }
        let digest = SHA256.hash(data: bytes).hexDigits
        guard package.size == Int64(bytes.count), package.sha256.lowercased() == digest else {
            throw LedgerStoreError(
                .invalidArgument, "content \(package.productID) \(package.version): size or SHA-256 does not match")
        }
        let inserted = try await database.raw(
            """
            INSERT INTO content_packages (bundle_id, product_id, version, sha256, size, bytes, uploaded_at)
            VALUES (\(bind: package.bundleID), \(bind: package.productID), \(bind: package.version), \
            \(bind: digest), \(bind: package.size), \(bind: bytes), \
            \(bind: LedgerTime.milliseconds(package.uploadedAt)))
            ON CONFLICT (bundle_id, product_id, version) DO NOTHING
            RETURNING version
            """
        ).first()
        guard inserted == nil else { return }
        let stored = try await database.raw(
            """
            SELECT sha256 FROM content_packages
            WHERE bundle_id = \(bind: package.bundleID) AND product_id = \(bind: package.productID)
              AND version = \(bind: package.version)
            """
        ).first()?.decode(column: "sha256", as: String.self)
        guard stored == digest else {
            throw LedgerStoreError(
                .contentVersionConflict,
                "content \(package.productID) \(package.version) was already uploaded with other bytes")
        }
    }

    /// The version uploaded last (ties broken by the greater version string) and its bytes.
    public func latestContent(bundleID: String, productID: String) async throws -> (ContentPackage, Data)? {
        guard
            let row = try await database.raw(
                """
                SELECT bundle_id, product_id, version, sha256, size, bytes, uploaded_at FROM content_packages
                WHERE bundle_id = \(bind: bundleID) AND product_id = \(bind: productID)
                ORDER BY uploaded_at DESC, version DESC
                LIMIT 1
                """
            ).first()
        else { return nil }
        let package = ContentPackage(
            bundleID: try row.decode(column: "bundle_id", as: String.self),
            productID: try row.decode(column: "product_id", as: String.self),
            version: try row.decode(column: "version", as: String.self),
            sha256: try row.decode(column: "sha256", as: String.self),
            size: try row.decode(column: "size", as: Int64.self),
            uploadedAt: try row.date("uploaded_at"))
        return (package, try row.decode(column: "bytes", as: Data.self))
    }
}
