import { describe, expect, it } from 'vitest';
import { compactSlots, sessionResources, shortImage, statusDetail } from './sessionRow';

const ASKED = JSON.stringify({ cpu: '0.5', mem: String(256 * 2 ** 20), 'cuda.shares': '2' });

describe("a session row's cells", () => {
  it('writes slots in few characters', () => {
    expect(compactSlots(ASKED)).toBe('0.5 CPU, 256 MiB, 2.00 fGPU');
    expect(compactSlots(JSON.stringify({ cpu: '2', mem: String(2 ** 30) }))).toBe('2 CPU, 1 GiB');
    expect(compactSlots(JSON.stringify({ cpu: '1', mem: String(1.5 * 2 ** 30), 'cuda.device': '1' }))).toBe('1 CPU, 1.5 GiB, 1 GPU');
    expect(compactSlots('{}')).toBe('-');
    expect(compactSlots('')).toBe('-');
    expect(compactSlots('not json')).toBe('-');
  });
  it('shows what a running session holds, and where', () => {
    expect(sessionResources({ status: 'RUNNING', occupying_slots: ASKED, requested_slots: ASKED, agent: 'agent-1' })).toEqual({ text: '0.5 CPU, 256 MiB, 2.00 fGPU', where: 'on agent-1', note: 'held now' });
  });
  it('shows what an ended session had, not "-"', () => {
    for (const status of ['TERMINATED', 'CANCELLED', 'ERROR'] as const) {
      expect(sessionResources({ status, occupying_slots: '{}', requested_slots: ASKED, agent: 'agent-1' })).toEqual({ text: '0.5 CPU, 256 MiB, 2.00 fGPU', where: 'ran on agent-1', note: 'what it had' });
    }
  });
  it('shows what a pending session asks for, nowhere yet', () => {
    expect(sessionResources({ status: 'PENDING', occupying_slots: '{}', requested_slots: ASKED, agent: null })).toEqual({ text: '0.5 CPU, 256 MiB, 2.00 fGPU', where: '', note: 'asked for: held once it starts' });
  });
  it('says "-" when there is nothing to show', () => {
    expect(sessionResources({ status: 'TERMINATED', occupying_slots: '{}', requested_slots: '', agent: null })).toEqual({ text: '-', where: '', note: '' });
  });
  it("drops a scheduler reason's code, and nothing else", () => {
    expect(statusDetail('no-available-instances: cuda.shares short on 3 of 3 agents')).toBe('cuda.shares short on 3 of 3 agents');
    expect(statusDetail('user-requested')).toBe('user-requested');
    expect(statusDetail('running')).toBe('running');
    expect(statusDetail('agent-lost')).toBe('agent-lost');
    expect(statusDetail('Error: the image is gone')).toBe('Error: the image is gone');
    expect(statusDetail(null)).toBe('');
  });
  it('drops the registry host of an image, and only that', () => {
    expect(shortImage('cr.backend.ai/stable/python:3.9-ubuntu20.04')).toBe('stable/python:3.9-ubuntu20.04');
    expect(shortImage('127.0.0.1:5000/bai/python:3.11')).toBe('bai/python:3.11');
    expect(shortImage('localhost/bai/python:3.11')).toBe('bai/python:3.11');
    expect(shortImage('bai/python:3.11-bookworm')).toBe('bai/python:3.11-bookworm');
    expect(shortImage('python:3.11')).toBe('python:3.11');
  });
});
