// UIKit's and AppKit's presentation classes, declared in this stand-in because StoreKit's sheets
// take them and Linux has neither framework: `Product.purchase(confirmIn:options:)` takes a scene,
// the sheets on iOS and visionOS a window scene or (iOS 27) a view controller, the sheets on macOS a
// window or a view controller. Only what the backend reads is declared, and only identity matters
// to the scripted store.

/// An object that represents one instance of your app's user interface.
/// https://developer.apple.com/documentation/uikit/uiscene
@MainActor open class UIScene {
    /// A scene, for tests.
    public init() {}
}

/// A scene that manages one or more windows: what StoreKit's sheets are shown in.
/// https://developer.apple.com/documentation/uikit/uiwindowscene
@MainActor open class UIWindowScene: UIScene {
    /// The scene's key window (iOS 15 and later).
    /// https://developer.apple.com/documentation/uikit/uiwindowscene/keywindow
    open var keyWindow: UIWindow?
}

/// The backdrop for your app's user interface.
/// https://developer.apple.com/documentation/uikit/uiwindow
@MainActor open class UIWindow {
    /// A window, for tests.
    public init() {}
    /// The root view controller of the window.
    /// https://developer.apple.com/documentation/uikit/uiwindow/rootviewcontroller
    open var rootViewController: UIViewController?
}

/// An object that manages a view hierarchy.
/// https://developer.apple.com/documentation/uikit/uiviewcontroller
@MainActor open class UIViewController {
    /// A view controller, for tests.
    public init() {}
    /// The view controller this one presents, if any.
    /// https://developer.apple.com/documentation/uikit/uiviewcontroller/presentedviewcontroller
    open var presentedViewController: UIViewController?
}

/// A window that an app displays on the screen (AppKit).
/// https://developer.apple.com/documentation/appkit/nswindow
@MainActor open class NSWindow {
    /// A window, for tests.
    public init() {}
    /// The main content view controller of the window.
    /// https://developer.apple.com/documentation/appkit/nswindow/contentviewcontroller
    open var contentViewController: NSViewController?
}

/// A controller that manages a view (AppKit).
/// https://developer.apple.com/documentation/appkit/nsviewcontroller
@MainActor open class NSViewController {
    /// A view controller, for tests.
    public init() {}
}
