// UIKit's scene classes, declared in this stand-in because `Product.purchase(confirmIn:options:)`
// takes a scene and StoreKit's sheets take a window scene, and Linux has no UIKit. Only their
// identity matters to the scripted store.

/// An object that represents one instance of your app's user interface.
/// https://developer.apple.com/documentation/uikit/uiscene
@MainActor open class UIScene {
    /// A scene, for tests.
    public init() {}
}

/// A scene that manages one or more windows: what StoreKit's sheets are shown in.
/// https://developer.apple.com/documentation/uikit/uiwindowscene
@MainActor open class UIWindowScene: UIScene {}
