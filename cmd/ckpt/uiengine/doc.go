// Package uiengine serves ckpt ui's page (internal/ui) from the engine: its
// Backend implements ui.Backend on engines it borrows one call at a time,
// and its EventHub turns the events of engines opened in this process into
// the page's live updates.
//
// It is the one place where the page and the engine meet, so the page
// itself knows nothing of the engine and the engine nothing of the page.
package uiengine
