// UIKit's scene class, declared in this stand-in because `Product.purchase(confirmIn:options:)`
// takes one and Linux has no UIKit. Only its identity matters to the scripted store.

/// An object that represents one instance of your app's user interface.
/// https://developer.apple.com/documentation/uikit/uiscene
@MainActor open class UIScene {
    /// A scene, for tests.
    public init() {}
}
