import * as L from 'leaflet';
import 'leaflet/dist/leaflet.css';
import { AGE_COLOURS, ageOf, placeable } from './fleet.js';
import type { EventView } from './types.js';

/** Leaflet takes the attribution as HTML; the configured text is shown as text. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export interface FleetMapOptions {
  tileUrl: string;
  attribution: string;
  /** A vehicle's marker was clicked: its latest event. */
  onSelect(event: EventView): void;
  /**
   * Whether the tiles load: false once tiles failed and none has loaded (offline, a blocked tile
   * server), true again when one loads. Without it the map would only be grey.
   */
  onTiles?(loading: boolean): void;
}

/**
 * The map of the fleet: one circle per vehicle at its latest position, coloured by age, and at
 * most one track. Imperative (Leaflet owns its DOM); the Preact view drives it. Each marker's
 * element carries data-dominio and data-event-id, which the browser tests look for.
 */
export class FleetMap {
  private readonly map: L.Map;
  private readonly markers = new Map<string, L.CircleMarker>();
  private readonly events = new Map<string, EventView>();
  private track: L.FeatureGroup | null = null;

  constructor(
    container: HTMLElement,
    private readonly options: FleetMapOptions,
  ) {
    // The whole world until there is something to show.
    this.map = L.map(container, { worldCopyJump: true, preferCanvas: false }).setView([0, 0], 2);
    const tiles = L.tileLayer(options.tileUrl, { maxZoom: 19, attribution: escapeHtml(options.attribution) });
    let loaded = false;
    tiles.on('tileload', () => {
      if (!loaded) options.onTiles?.(true);
      loaded = true;
    });
    tiles.on('tileerror', () => {
      if (!loaded) options.onTiles?.(false);
    });
    tiles.addTo(this.map);
  }

  /** Replaces every marker; with `frame`, zooms to show them all. True when there was something to frame. */
  setPositions(events: readonly EventView[], now: number, frame: boolean): boolean {
    for (const marker of this.markers.values()) marker.remove();
    this.markers.clear();
    this.events.clear();
    for (const event of events) this.place(event, now);
    if (!frame || this.markers.size === 0) return false;
    this.frame(L.featureGroup([...this.markers.values()]).getBounds());
    return true;
  }

  /** A vehicle's newer event (live): its marker moves there, or appears. */
  place(event: EventView, now: number): void {
    if (!placeable(event)) return;
    this.events.set(event.dominio, event);
    const age = ageOf(event.receivedAt, now);
    const style = { color: '#fff', weight: 2, fillColor: AGE_COLOURS[age], fillOpacity: 0.95 };
    let marker = this.markers.get(event.dominio);
    if (marker === undefined) {
      marker = L.circleMarker([event.latitud, event.longitud], { radius: 8, className: 'vehicle', ...style }).addTo(this.map);
      marker.bindTooltip(event.dominio, { direction: 'top', offset: [0, -8] });
      const dominio = event.dominio;
      marker.on('click', () => {
        const latest = this.events.get(dominio);
        if (latest !== undefined) this.options.onSelect(latest);
      });
      this.markers.set(event.dominio, marker);
    } else {
      marker.setLatLng([event.latitud, event.longitud]).setStyle(style);
    }
    const element = marker.getElement();
    element?.setAttribute('data-dominio', event.dominio);
    element?.setAttribute('data-event-id', event.id);
    element?.setAttribute('data-age', age);
  }

  /** Recolours every marker as time passes (ages change without new events). */
  refreshAges(now: number): void {
    for (const event of this.events.values()) this.place(event, now);
  }

  /** Draws one vehicle's track (oldest first), replacing the previous one, and frames it. */
  showTrack(events: readonly EventView[]): void {
    this.clearTrack();
    const points = events.filter(placeable).map((e): L.LatLngTuple => [e.latitud, e.longitud]);
    if (points.length === 0) return;
    const line = L.polyline(points, { color: '#2563eb', weight: 3, opacity: 0.85, className: 'track' });
    const start = L.circleMarker(points[0] ?? [0, 0], { radius: 4, color: '#2563eb', fillOpacity: 1, className: 'track-start' });
    this.track = L.featureGroup([line, start]).addTo(this.map);
    line.getElement()?.setAttribute('data-points', String(points.length));
    this.frame(line.getBounds());
  }

  /** A live event of the vehicle whose track is shown extends it. */
  extendTrack(event: EventView): void {
    if (this.track === null || !placeable(event)) return;
    for (const layer of this.track.getLayers()) {
      if (layer instanceof L.Polyline && !(layer instanceof L.Polygon)) {
        layer.addLatLng([event.latitud, event.longitud]);
        layer.getElement()?.setAttribute('data-points', String((layer.getLatLngs() as L.LatLng[]).length));
      }
    }
  }

  clearTrack(): void {
    this.track?.remove();
    this.track = null;
  }

  destroy(): void {
    this.map.remove();
  }

  private frame(bounds: L.LatLngBounds): void {
    if (bounds.isValid()) this.map.fitBounds(bounds, { padding: [40, 40], maxZoom: 15, animate: false });
  }
}
