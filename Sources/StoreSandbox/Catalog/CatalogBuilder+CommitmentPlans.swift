import AppStoreModels
import Foundation

extension CatalogBuilder {
    /// Checks that every commitment plan of the options belongs to a yearly auto-renewable
    /// subscription of the catalog, the only kind Apple sells on a monthly plan with a 12-month
    /// commitment.
    func checkCommitmentPlans() throws(SandboxError) {
        for productID in options.commitmentPlans.keys.sorted() {
            guard let position = positions[productID] else { continue }
            let product = products[position]
            guard product.type == .autoRenewableSubscription, product.subscription?.period == .oneYear else {
                throw SandboxError(
                    .catalogInvalid,
                    "The commitment plan of \(productID) needs a yearly auto-renewable subscription; "
                        + "\(productID) is not one.")
            }
        }
    }
}
