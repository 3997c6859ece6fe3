import * as React from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';

import { isOutsideRequest, MCPServerRow, MCPServers, plain, serverMeta, toolsOf } from '../src/settingsTab';

const row = (over: Partial<MCPServerRow> = {}): MCPServerRow => ({
  name: 'toy',
  source: 'user',
  transport: 'stdio',
  target: 'python toy.py',
  enabled: true,
  status: 'running',
  error: null,
  trust: { '*': 'read' },
  tools: ['echo', 'add'],
  ...over
});

const render = (servers: MCPServerRow[], live?: unknown, problems: string[] = []) =>
  renderToStaticMarkup(React.createElement(MCPServers, { listing: { servers, problems }, live }));

describe('the MCP servers of the settings tab', () => {
  it('lists each server with its status, configuration and tools', () => {
    const html = render([row(), row({ name: 'git', status: 'failed', error: 'did not start', enabled: false, tools: [] })]);
    expect(html).toContain('<b>toy</b>');
    expect(html).toContain('data-status="running"');
    expect(html).toContain('stdio · user · tool set on · trust *: read');
    expect(html).toContain('<li>echo</li><li>add</li>');
    expect(html).toContain('data-status="failed"');
    expect(html).toContain('did not start');
    expect(serverMeta(row({ trust: {}, enabled: false, source: 'workspace' }))).toBe('stdio · workspace · tool set off · trust *: ask');
  });

  it('escapes what hostile configs and servers say', () => {
    const hostile = row({
      name: '<img src=x onerror=alert(1)>',
      target: '"><script>alert(2)</script>',
      error: '\u001b[31mred\u001b[0m\u202eevil',
      tools: ['<b>bold</b>'],
      trust: { '<i>': 'always' }
    });
    const html = render([hostile], undefined, ['<svg onload=alert(3)>']);
    expect(html).not.toMatch(/<(img|script|svg|i)[ >]/);
    expect(html).not.toContain('<b>bold</b>');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).toContain('&lt;b&gt;bold&lt;/b&gt;');
    expect(html).toContain('\\u001b[31mred\\u001b[0m\\u202eevil');
    expect(html).not.toContain('\u001b');
  });

  it('shows the tools a server listed again at run time', () => {
    expect(toolsOf(row(), { toy: ['echo', 'fresh'] })).toEqual(['echo', 'fresh']);
    expect(toolsOf(row(), { other: ['x'] })).toEqual(['echo', 'add']);
    expect(toolsOf(row(), undefined)).toEqual(['echo', 'add']);
    expect(render([row()], { toy: ['fresh'] })).toContain('<li>fresh</li>');
  });

  it('cuts long text and flattens lines', () => {
    expect(plain('a\nb')).toBe('a b');
    expect(plain('x'.repeat(10), 5)).toBe('xxxx…');
  });

  it('tells an outside agent request from the agent own ones', () => {
    expect(isOutsideRequest({ call_id: 'mcp_1a2b', turn_id: '' })).toBe(true);
    expect(isOutsideRequest({ call_id: 'mcp_1a2b', turn_id: 't1' })).toBe(false);
    expect(isOutsideRequest({ call_id: 'call_1', turn_id: '' })).toBe(false);
  });
});
